#!/bin/bash
# Decodes the guest's result channel (see guest-init.sh) into <outdir>.
#   decode-channel.sh <channel file> <outdir>
# Verifies size and sha256 of every file; prints the guest's exit status on
# stdout.  Exit status: 0 when the stream is complete and every file checks,
# 2 when it is truncated or corrupt.
set -euo pipefail
chan=$1
out=$2
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tr -d '\r' < "$chan" > "$tmp/chan"
status=""
bad=0
cur=""
while IFS= read -r line; do
  case "$line" in
    TBBOOT\ *) ;;
    TBFILE\ *)
      read -r _ name size sum <<< "$line"
      case "$name" in
        /*|*..*) echo "decode-channel: refusing unsafe name '$name'" >&2; bad=1; cur="";;
        *) cur=$name; : > "$tmp/b64";;
      esac;;
    TBEND\ *)
      if [ -n "$cur" ]; then
        mkdir -p "$(dirname "$out/$cur")"
        if ! base64 -d < "$tmp/b64" > "$out/$cur"; then
          echo "decode-channel: $cur: base64 decode failed" >&2; bad=1
        fi
        got_size=$(stat -c %s "$out/$cur")
        got_sum=$(sha256sum "$out/$cur" | cut -d' ' -f1)
        if [ "$got_size" != "$size" ] || [ "$got_sum" != "$sum" ]; then
          echo "decode-channel: $cur: size/sha256 mismatch ($got_size vs $size)" >&2; bad=1
        fi
      fi
      cur="";;
    TBEXIT\ *) status=${line#TBEXIT }; status=${status%% *};;
    *) if [ -n "$cur" ]; then printf '%s\n' "$line" >> "$tmp/b64"; fi;;
  esac
done < "$tmp/chan"
if [ -z "$status" ]; then
  echo "decode-channel: no TBEXIT in $chan (guest did not finish: crash or timeout)" >&2
  exit 2
fi
echo "$status"
[ $bad -eq 0 ] || exit 2
