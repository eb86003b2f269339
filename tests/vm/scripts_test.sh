#!/bin/bash
# Host-only checks of the VM-lab scripts (no qemu): the result channel
# decoder accepts exactly what the guest sends and rejects corruption and
# truncation; bad arguments are clear errors that leave nothing behind.
set -u
vm=$(cd "$(dirname "$0")/../../scripts/vm" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
. "$(dirname "$0")/../common/check.sh"

# A channel as guest-init.sh writes it (CRLF line ends from the serial line).
head -c 70000 /dev/urandom > "$t/blob.bin"
printf '{"a": 1}\n' > "$t/r.json"
mk() {  # $1 = output, $2 = corrupt|truncate|ok
  {
    echo "TBBOOT 6.1.0-test 1.23"
    for f in blob.bin r.json; do
      echo "TBFILE sub/$f $(stat -c %s "$t/$f") $(sha256sum "$t/$f" | cut -d' ' -f1)"
      base64 "$t/$f"
      echo "TBEND sub/$f"
    done
    echo "TBEXIT 7"
  } | sed 's/$/\r/' > "$1"
  case "$2" in
    corrupt) sed -i '5{s/^A/B/;t;s/^./A/}' "$1";;  # the first character always changes
    truncate) head -n 20 "$1" > "$1.tmp" && mv "$1.tmp" "$1";;
  esac
}
mk "$t/ok.chan" ok
st=$("$vm/decode-channel.sh" "$t/ok.chan" "$t/out" 2>"$t/err"); rc=$?
check "decode: complete stream exits 0" '[ $rc -eq 0 ]'
check "decode: guest status passed through" '[ "$st" = 7 ]'
check "decode: binary file byte for byte" 'cmp -s "$t/blob.bin" "$t/out/sub/blob.bin"'
check "decode: json byte for byte" 'cmp -s "$t/r.json" "$t/out/sub/r.json"'

mk "$t/bad.chan" corrupt
"$vm/decode-channel.sh" "$t/bad.chan" "$t/out2" >/dev/null 2>"$t/err"; rc=$?
check "decode: corrupted payload is rejected" '[ $rc -eq 2 ] && grep -q mismatch "$t/err"'

mk "$t/trunc.chan" truncate
"$vm/decode-channel.sh" "$t/trunc.chan" "$t/out3" >/dev/null 2>"$t/err"; rc=$?
check "decode: truncated stream is rejected" '[ $rc -eq 2 ] && grep -q "no TBEXIT" "$t/err"'

printf 'TBFILE ../evil 1 x\r\nAA==\r\nTBEND ../evil\r\nTBEXIT 0\r\n' > "$t/evil.chan"
"$vm/decode-channel.sh" "$t/evil.chan" "$t/out4" >/dev/null 2>"$t/err"; rc=$?
check "decode: path traversal refused" '[ $rc -eq 2 ] && [ ! -e "$t/evil" ]'

"$vm/tracebench-vm.sh" --kernel /nonexistent/vmlinuz --outdir "$t/o5" -- true 2>"$t/err"; rc=$?
check "vm: missing kernel is exit 3 with a clear message" '[ $rc -eq 3 ] && grep -q "not found" "$t/err"'
check "vm: missing kernel creates no output dir" '[ ! -e "$t/o5" ]'
"$vm/tracebench-vm.sh" --kernel /nonexistent/vmlinuz 2>"$t/err"; rc=$?
check "vm: no guest command is an error" '[ $rc -eq 3 ] && grep -q "no guest command" "$t/err"'
"$vm/run-qemu.sh" --kernel /etc/hostname --initrd /etc/hostname --outdir "$t/o6" --accel bogus 2>"$t/err"; rc=$?
check "qemu: bad --accel rejected" '[ $rc -eq 3 ] && grep -q "auto, kvm or tcg" "$t/err"'
TRACEBENCH_VM_TCG_THREAD=many "$vm/run-qemu.sh" --kernel /etc/hostname --initrd /etc/hostname --outdir "$t/o7" \
  --accel tcg 2>"$t/err"; rc=$?
check "qemu: bad TRACEBENCH_VM_TCG_THREAD rejected" '[ $rc -eq 3 ] && grep -q "single or multi" "$t/err"'
"$vm/build-kmod.sh" --headers /nonexistent --out "$t/o7" 2>"$t/err"; rc=$?
check "kmod: bad headers dir is a clear error" '[ $rc -ne 0 ] && grep -q "not a kernel build directory" "$t/err" && [ ! -e "$t/o7" ]'
# build-lttng-modules.sh: bad arguments fail before anything is built or cached.
"$vm/build-lttng-modules.sh" --cache "$t/cache" >/dev/null 2>"$t/err"; rc=$?
check "lttng-modules: no --headers is a clear error" '[ $rc -eq 1 ] && grep -q "kernel build directory" "$t/err"'
"$vm/build-lttng-modules.sh" --headers "$t" --cache "$t/cache" >/dev/null 2>"$t/err"; rc=$?
check "lttng-modules: a directory without a Makefile is refused" '[ $rc -eq 1 ] && grep -q "kernel build directory" "$t/err"'
mkdir -p "$t/hdr" && touch "$t/hdr/Makefile"
"$vm/build-lttng-modules.sh" --headers "$t/hdr" --release 0.0-tb-none --cache "$t/cache" >/dev/null 2>"$t/err"; rc=$?
check "lttng-modules: a release without its modules.builtin is refused" '[ $rc -eq 1 ] && grep -q "linux-image-0.0-tb-none" "$t/err"'
check "lttng-modules: nothing cached after refusals" '[ ! -e "$t/cache" ]'
"$vm/build-lttng-modules.sh" --headers "$t/hdr" --bogus 1 >/dev/null 2>"$t/err"; rc=$?
check "lttng-modules: unknown argument" '[ $rc -eq 1 ] && grep -q "unknown argument" "$t/err"'

# Module parameters for the guest's insmod: refused unless NAME=VALUE with a
# charset the guest's unquoted insmod line cannot misread, before anything is built.
echo 'exec true' > "$t/run.sh"
"$vm/mkinitramfs.sh" --out "$t/i.cpio" --run "$t/run.sh" --kmod /nonexistent.ko --kmod-param 'a=1;reboot' 2>"$t/err"; rc=$?
check "initramfs: a shell character in --kmod-param is refused" '[ $rc -eq 1 ] && grep -q "expected NAME=VALUE" "$t/err" && [ ! -e "$t/i.cpio" ]'
"$vm/mkinitramfs.sh" --out "$t/i.cpio" --run "$t/run.sh" --kmod-param a=1 2>"$t/err"; rc=$?
check "initramfs: --kmod-param without --kmod is refused" '[ $rc -eq 1 ] && grep -q "needs --kmod" "$t/err"'
"$vm/tracebench-vm.sh" --kernel /nonexistent/vmlinuz --outdir "$t/o8" --kmod-param 'x=$(reboot)' -- true 2>"$t/err"; rc=$?
check "vm: a bad --kmod-param is refused before anything" '[ $rc -eq 3 ] && grep -q "expected NAME=VALUE" "$t/err" && [ ! -e "$t/o8" ]'
"$vm/tracebench-vm.sh" --kernel /nonexistent/vmlinuz --no-kmod --kmod-param x=1 -- true 2>"$t/err"; rc=$?
check "vm: --kmod-param with --no-kmod is refused" '[ $rc -eq 3 ] && grep -q "no module to give parameters to" "$t/err"'

# bisect-kernels.sh: bad input is exit 2 with the reason, before any kernel
# is booted or anything written (fake names: these checks need no kernel).
bk() {  # $1 = check name, $2 = expected message, then the arguments
  local name=$1 want=$2; shift 2
  "$vm/bisect-kernels.sh" --outdir "$t/bisect" "$@" >/dev/null 2>"$t/err"; rc=$?
  check "bisect: $name" '[ $rc -eq 2 ] && grep -qF -- "$want" "$t/err" && [ ! -e "$t/bisect" ]'
}
B=none/kmod_target/none/payload:0/threads:1
R=(-- run -t none -w kmod_target -p 0)
bk "missing arguments" "need BENCH GOOD BAD" "$B" k1 "${R[@]}"
bk "--rounds 1" "--rounds must be 2..99" --rounds 1 --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "--rounds x" "--rounds must be 2..99" --rounds x --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "--max-rounds below --rounds" "--max-rounds must be --rounds..99" --rounds 5 --max-rounds 4 --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "--threshold 11" "--threshold must be a number in 0..10" --threshold 11 --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "GOOD after BAD" "must come before BAD" --kernels k1,k2,k3 "$B" k3 k1 "${R[@]}"
bk "GOOD = BAD" "must come before BAD" --kernels k1,k2 "$B" k2 k2 "${R[@]}"
bk "GOOD not listed" "GOOD 'k9' is not in the candidate list" --kernels k1,k2 "$B" k9 k2 "${R[@]}"
bk "a kernel listed twice" "is listed twice" --kernels k1,k2,k1 "$B" k1 k2 "${R[@]}"
bk "an empty list entry" "has an empty entry" --kernels k1,,k2 "$B" k1 k2 "${R[@]}"
bk "derived list, GOOD after BAD" "does not come before" "$B" 9.9.9-2-tbfake 9.9.9-1-tbfake "${R[@]}"
bk "derived list, two flavours" "not releases of the same flavour" "$B" 9.9.9-1-tbfake 9.9.9-2-other "${R[@]}"
bk "a malformed BENCH" "is not a benchmark name" --kernels k1,k2 none/kmod_target k1 k2 "${R[@]}"
bk "BENCH's workload not run" "workload 'kmod_fixed' is not among" --kernels k1,k2 \
  none/kmod_fixed/none/payload:0/threads:1 k1 k2 "${R[@]}"
bk "--inject-from a shell word" "is not a module parameter NAME=VALUE" --kernels k1,k2 --inject-from k2 'a=`reboot`' \
  "$B" k1 k2 "${R[@]}"
bk "--inject-from an unlisted kernel" "--inject-from 'k7' is not in the candidate list" --kernels k1,k2 \
  --inject-from k7 a=1 "$B" k1 k2 "${R[@]}"
bk "a guest command other than run" "must be 'run ...'" --kernels k1,k2 "$B" k1 k2 -- list
bk "run --out" "run --out is set by" --kernels k1,k2 "$B" k1 k2 -- run --out x
bk "an unknown option" "unknown option '--bogus'" --bogus --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "--accel with --lava" "--accel with --lava" --lava lab --accel tcg --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "--lava-identity-file missing" "--lava-identity-file '/nonexistent/l.yaml' is not a file" --lava lab \
  --lava-identity-file /nonexistent/l.yaml --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "--lava-job-option without --lava" "need --lava IDENTITY" --lava-job-option=--smp=1 --kernels k1,k2 "$B" k1 k2 "${R[@]}"
bk "a missing image" "kernel image '$t/nope' not found" --kernels "$t/nope,k2" "$B" nope k2 "${R[@]}"
printf '# candidates\n\n' > "$t/empty.list"
bk "an empty --kernels-file" "lists no kernel" --kernels-file "$t/empty.list" "$B" k1 k2 "${R[@]}"

# The k-ary rule of bisect-kernels --lava (scripts/lava/kary.sh): D idle
# devices test D/2 candidates a step (a pair takes two), at least one, at most
# those left; the split points cut the range into k + 1 near-equal parts.
kary() { (here=$vm lava_job_opts=() && . "$vm/../lava/kary.sh" && lo=$1 hi=$2 && shift 2 && "$@"); }
check "k-ary: one or two idle devices test one candidate" '[ "$(kary 0 9 lava_k 1 8)" = 1 ] && [ "$(kary 0 9 lava_k 2 8)" = 1 ]'
check "k-ary: four devices test two, seven three" '[ "$(kary 0 9 lava_k 4 8)" = 2 ] && [ "$(kary 0 9 lava_k 7 8)" = 3 ]'
check "k-ary: never more than the candidates left" '[ "$(kary 0 2 lava_k 6 1)" = 1 ]'
check "k-ary: the split points (binary middle, thirds)" '[ "$(kary 0 4 lava_points 1)" = 2 ] && [ "$(kary 0 9 lava_points 2)" = "3 6" ]'
# The range a step's verdicts leave (lava_bounds): the first bad candidate is
# the new hi, the last good one below it the new lo; an undecided one moves
# neither.  bounds LO HI CAND:VERDICT... prints "lo hi".
bounds() {
  (here=$vm lava_job_opts=() && . "$vm/../lava/kary.sh" && lo=$1 hi=$2 && shift 2 &&
   lava_cand=() lava_verdict=() && j=0 && for cv in "$@"; do j=$((j + 1)); lava_cand[$j]=${cv%%:*} lava_verdict[$j]=${cv#*:}; done &&
   lava_bounds && echo "$lava_lo $lava_hi")
}
check "k-ary: a bad middle is the new hi, a good one the new lo" \
  '[ "$(bounds 0 4 2:regression)" = "0 2" ] && [ "$(bounds 0 2 1:same)" = "1 2" ] && [ "$(bounds 0 2 1:improvement)" = "1 2" ]'
check "k-ary: two candidates, good below bad: the range between them" '[ "$(bounds 0 9 3:same 6:regression)" = "3 6" ]'
check "k-ary: a good candidate above the first bad one does not move lo" '[ "$(bounds 0 9 3:regression 6:same)" = "0 3" ]'
check "k-ary: an undecided candidate moves neither bound" \
  '[ "$(bounds 0 9 3:undecided 6:regression)" = "0 6" ] && [ "$(bounds 0 4 2:undecided)" = "0 4" ]'

# The initramfs carries executables without their debug sections, with their
# symbols, mode and behaviour (mkinitramfs.sh, copy_exe); a script as it is.
if command -v gcc >/dev/null && command -v readelf >/dev/null && command -v cpio >/dev/null && [ -x /bin/busybox ]; then
  printf 'int tb_probe_me(int x) { return x + 1; }\nint main(void) { return tb_probe_me(41) == 42 ? 7 : 1; }\n' > "$t/g.c"
  gcc -g -O1 -o "$t/g" "$t/g.c"
  printf '#!/bin/sh\necho script\n' > "$t/s.sh" && chmod 755 "$t/s.sh"
  "$vm/mkinitramfs.sh" --out "$t/g.cpio" --run "$t/run.sh" --bin "$t/g" --bin "$t/s.sh" 2>"$t/err"; rc=$?
  mkdir -p "$t/gx" && (cd "$t/gx" && cpio -id --quiet < "$t/g.cpio")
  "$t/gx/tb/bin/g"; grc=$?
  check "initramfs: an executable goes in without debug sections" '[ $rc -eq 0 ] && readelf -S "$t/g" | grep -q debug_info && ! readelf -S "$t/gx/tb/bin/g" | grep -q "\.debug_"'
  check "initramfs: it keeps its symbols, mode and behaviour" '[ -x "$t/gx/tb/bin/g" ] && [ $grc -eq 7 ] && nm "$t/gx/tb/bin/g" | grep -q " T tb_probe_me$"'
  check "initramfs: a script goes in as it is" 'cmp -s "$t/s.sh" "$t/gx/tb/bin/s.sh" && [ -x "$t/gx/tb/bin/s.sh" ]'
fi

# --accel auto and the KVM memo (run-qemu.sh), on a fake qemu: a host whose
# KVM hangs the guest, one where qemu aborts, one where KVM works.  The fake
# boots TCG at once (TBBOOT, TBEXIT 0 on the channel) and counts KVM tries.
mkdir -p "$t/fakebin" "$t/fk"
cat > "$t/fakebin/qemu-system-x86_64" <<'FAKE'
#!/bin/bash
[ "$1" = --version ] && { echo "QEMU emulator version 0.0-fake"; exit 0; }
chan=$(printf '%s\n' "$@" | sed -n 's/.*id=chan,path=//p')
boot() { printf 'TBBOOT 6.1.0-fake 0.5\r\nTBEXIT 0\r\n' > "$chan"; exit 0; }
case " $* " in
  *" -accel kvm "*)
    echo kvm >> "$FAKE_KVM_TRIES"
    case "$FAKE_KVM" in hang) sleep 30;; abort) echo "qemu: kvm_buf_set_msrs: Assertion failed" >&2; exit 134;; ok) boot;; esac;;
  *) boot;;
esac
FAKE
chmod +x "$t/fakebin/qemu-system-x86_64"
: > "$t/fk/kvm"; echo boot-1 > "$t/fk/boot_id"; : > "$t/fk/tries"
head -c 4096 /dev/zero > "$t/fk/img"
fq() {  # fq NAME [run-qemu options]: one fake boot; rc, its stderr in $t/fk/NAME.err
  local name=$1; shift
  PATH=$t/fakebin:$PATH XDG_CACHE_HOME=$t/fk/cache TB_VM_KVM_DEV=$t/fk/kvm TB_VM_BOOT_ID_FILE=$t/fk/boot_id \
    TB_VM_KVM_PROBE_SECONDS=2 FAKE_KVM_TRIES=$t/fk/tries \
    "$vm/run-qemu.sh" --kernel "$t/fk/img" --initrd "$t/fk/img" --outdir "$t/fk/$name" "$@" 2>"$t/fk/$name.err"
}
tries() { wc -l < "$t/fk/tries"; }
accel_of() { sed -n 's/.*"accel": "\([a-z]*\)".*/\1/p' "$t/fk/$1/vm.json"; }
FAKE_KVM=hang fq hang1; rc=$?
check "kvm memo: a hang falls back to TCG and is remembered" '[ $rc -eq 0 ] && [ "$(accel_of hang1)" = tcg ] && [ "$(tries)" = 1 ] && grep -q "boot-1 .* did not boot" "$t/fk/cache/tracebench/kvm-failed"'
FAKE_KVM=hang fq hang2; rc=$?
check "kvm memo: the next auto boot goes to TCG without trying KVM" '[ $rc -eq 0 ] && [ "$(accel_of hang2)" = tcg ] && [ "$(tries)" = 1 ] && grep -q "failed on this host earlier" "$t/fk/hang2.err"'
echo boot-2 > "$t/fk/boot_id"
FAKE_KVM=abort fq abort1; rc=$?
check "kvm memo: another host boot tries again; qemu's abort is remembered in its words" '[ $rc -eq 0 ] && [ "$(tries)" = 2 ] && grep -q "boot-2 .* qemu: qemu: kvm_buf_set_msrs" "$t/fk/cache/tracebench/kvm-failed"'
FAKE_KVM=ok fq forced --accel kvm; rc=$?
check "kvm memo: --accel kvm tries despite it, and a working KVM forgets it" '[ $rc -eq 0 ] && [ "$(accel_of forced)" = kvm ] && [ "$(tries)" = 3 ] && [ ! -e "$t/fk/cache/tracebench/kvm-failed" ]'
FAKE_KVM=ok fq ok2; rc=$?
check "kvm memo: with nothing remembered auto tries KVM" '[ $rc -eq 0 ] && [ "$(accel_of ok2)" = kvm ] && [ "$(tries)" = 4 ]'

exit $fail
