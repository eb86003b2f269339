# Sourced by shell tests that can skip.  tb_skip CAPABILITY REASON: exit 77
# (ctest's SKIP_RETURN_CODE: reported as skipped) with the reason; but when
# CAPABILITY is listed in TRACEBENCH_REQUIRE (comma list, e.g.
# "ebpf,ftrace,perf,lttng"; CI sets it to what its machine can do), the
# missing capability fails the test (exit 1) with the reason instead.
tb_required() {
  case ",${TRACEBENCH_REQUIRE:-}," in
    *",$1,"*) return 0 ;;
    *) return 1 ;;
  esac
}
tb_skip() {
  if tb_required "$1"; then
    echo "FAIL: $1 is required (TRACEBENCH_REQUIRE=$TRACEBENCH_REQUIRE) but cannot run: $2"
    exit 1
  fi
  echo "SKIP: $2"
  exit 77
}
