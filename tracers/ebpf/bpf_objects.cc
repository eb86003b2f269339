#include "bpf_objects.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <unistd.h>

#include "libbpf_log.h"
#include "site_links.h"
#include "tb_fentry.skel.h"
#include "tb_kprobe.skel.h"
#include "tb_perf_event.skel.h"
#include "tb_rawtp.skel.h"
#include "tb_tp.skel.h"
#include "tb_uprobe.skel.h"

namespace tracebench::ebpf {

const char* to_string(AttachType t) {
  switch (t) {
    case AttachType::kTracepoint: return "tracepoint";
    case AttachType::kRawTp: return "raw_tp";
    case AttachType::kTpBtf: return "tp_btf";
    case AttachType::kUprobe: return "uprobe";
    case AttachType::kUretprobe: return "uretprobe";
    case AttachType::kUprobeMulti: return "uprobe_multi";
    case AttachType::kUsdt: return "usdt";
    case AttachType::kFentry: return "fentry";
    case AttachType::kFexit: return "fexit";
    case AttachType::kKprobe: return "kprobe";
    case AttachType::kPerfEvent: return "perf_event";
  }
  return "?";
}

bool parse_attach_type(const std::string& s, AttachType* out) {
  for (AttachType t : kAllAttachTypes) {
    if (s == to_string(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

const char* program_prefix(AttachType t) {
  switch (t) {
    case AttachType::kTracepoint: return "tb_tp";
    case AttachType::kRawTp: return "tb_rtp";
    case AttachType::kTpBtf: return "tb_btf";
    case AttachType::kUprobe:
    case AttachType::kUprobeMulti: return "tb_up";  // the same programs, loaded for a multi link
    case AttachType::kUretprobe: return "tb_urp";
    case AttachType::kUsdt: return "tb_usdt";
    case AttachType::kFentry: return "tb_fen";
    case AttachType::kFexit: return "tb_fex";
    case AttachType::kKprobe: return "tb_kp";
    case AttachType::kPerfEvent: return "tb_pe";
  }
  return "?";
}

const char* family_of(AttachType t) {
  switch (t) {
    case AttachType::kTracepoint: return "tb_tp";
    case AttachType::kRawTp:
    case AttachType::kTpBtf: return "tb_rawtp";
    case AttachType::kUprobe:
    case AttachType::kUretprobe:
    case AttachType::kUprobeMulti:
    case AttachType::kUsdt: return "tb_uprobe";
    case AttachType::kFentry:
    case AttachType::kFexit: return "tb_fentry";
    case AttachType::kKprobe: return "tb_kprobe";
    case AttachType::kPerfEvent: return "tb_perf_event";
  }
  return "?";
}

namespace {

std::string errstr(int err) { return std::strerror(err < 0 ? -err : err); }

std::string with_libbpf(std::string msg) {
  std::string lib = libbpf_messages();
  if (!lib.empty()) msg += " [" + lib + "]";
  return msg;
}

// Every skeleton has the same .rodata variables and maps, so one template
// configures any of them.
template <class Skel>
Status configure_and_load(Skel* s, const LoadConfig& cfg, int (*load)(Skel*), LoadedObject* lo) {
  s->rodata->tb_tgid = cfg.tgid;
  s->rodata->tb_sys_nr = cfg.sys_nr;
  s->rodata->tb_record_bytes = cfg.record_bytes;
  s->rodata->tb_wakeup_flags = cfg.wakeup_flags;
  s->rodata->tb_hash_shared = cfg.hash_shared ? 1 : 0;
  s->rodata->tb_payload_arg = cfg.payload_arg;
  s->rodata->tb_payload_len_arg = cfg.payload_len_arg;

  // Maps the action does not use are shrunk to the minimum.
  const bool hash = cfg.action == "hash";
  bpf_map__set_max_entries(s->maps.tb_hash_pc, hash && !cfg.hash_shared ? cfg.hash_entries : 1);
  bpf_map__set_max_entries(s->maps.tb_hash_sh, hash && cfg.hash_shared ? cfg.hash_entries : 1);
  bpf_map__set_max_entries(s->maps.tb_rb, cfg.action == "ringbuf" ? cfg.ringbuf_bytes : 4096);
  if (cfg.action != "perfbuf") bpf_map__set_max_entries(s->maps.tb_scratch, 1);

  lo->obj = s->obj;
  lo->count = s->maps.tb_count;
  lo->drops = s->maps.tb_drops;
  lo->faults = s->maps.tb_faults;
  lo->hash = cfg.hash_shared ? s->maps.tb_hash_sh : s->maps.tb_hash_pc;
  lo->rb = s->maps.tb_rb;
  lo->pb = s->maps.tb_pb;
  lo->program_name = std::string(program_prefix(cfg.attach)) + "_" + cfg.action;

  bpf_program* p;
  bpf_object__for_each_program(p, s->obj) {
    const bool chosen = lo->program_name == bpf_program__name(p);
    bpf_program__set_autoload(p, chosen);
    if (chosen) lo->prog = p;
  }
  if (!lo->prog)
    return Status::error("no BPF program '" + lo->program_name + "' in " + family_of(cfg.attach) +
                         ".bpf.c (unknown action '" + cfg.action + "')");
  if (cfg.attach == AttachType::kFentry || cfg.attach == AttachType::kFexit) {
    int err = bpf_program__set_attach_target(lo->prog, 0, cfg.btf_target.c_str());
    if (err)
      return Status::error(with_libbpf("setting the " + std::string(to_string(cfg.attach)) + " target " +
                                       cfg.btf_target + ": " + errstr(err)));
  }
  // A multi link takes only a program loaded for one (the kernel checks).
  if (cfg.attach == AttachType::kUprobeMulti)
    bpf_program__set_expected_attach_type(lo->prog, static_cast<bpf_attach_type>(kUprobeMultiAttachType));
  int err = load(s);
  if (err) {
    std::string what = "loading BPF program " + lo->program_name + " (" + to_string(cfg.attach);
    if (!cfg.btf_target.empty()) what += " on " + cfg.btf_target;
    what += "): " + errstr(err);
    if (libbpf_messages(1u << 20).find("BEGIN PROG LOAD LOG") == std::string::npos) what += ", verifier log empty";
    // libbpf blames RLIMIT_MEMLOCK on every EPERM; as root on a kernel that
    // charges BPF memory to the cgroup, EPERM is the kernel's own refusal.
    if (err == -EPERM && geteuid() == 0)
      what +=
          " (the running kernel refuses this program to root: not a memlock limit, whatever libbpf suggests; "
          "run it in the VM lab, `tracebench vm`)";
    return Status::error(with_libbpf(what));
  }
  return Status::ok();
}

template <class Skel>
Status open_family(Skel* (*open)(const bpf_object_open_opts*), int (*load)(Skel*), void (*destroy)(Skel*),
                   const LoadConfig& cfg, std::unique_ptr<LoadedObject>* out) {
  Skel* s = open(nullptr);
  if (!s) {
    const int err = errno;
    return Status::error(
        with_libbpf(std::string("opening BPF skeleton ") + family_of(cfg.attach) + ": " + errstr(err)));
  }
  auto lo = std::make_unique<LoadedObject>();
  lo->destroy = [s, destroy] { destroy(s); };
  Status st = configure_and_load(s, cfg, load, lo.get());
  if (!st) return st;  // lo's destructor destroys the skeleton
  *out = std::move(lo);
  return Status::ok();
}

}  // namespace

Status load_program(const LoadConfig& cfg, std::unique_ptr<LoadedObject>* out) {
  install_libbpf_log();
  clear_libbpf_messages();
  switch (cfg.attach) {
    case AttachType::kTracepoint: return open_family<tb_tp>(tb_tp__open_opts, tb_tp__load, tb_tp__destroy, cfg, out);
    case AttachType::kRawTp:
    case AttachType::kTpBtf:
      return open_family<tb_rawtp>(tb_rawtp__open_opts, tb_rawtp__load, tb_rawtp__destroy, cfg, out);
    case AttachType::kUprobe:
    case AttachType::kUretprobe:
    case AttachType::kUprobeMulti:
    case AttachType::kUsdt:
      return open_family<tb_uprobe>(tb_uprobe__open_opts, tb_uprobe__load, tb_uprobe__destroy, cfg, out);
    case AttachType::kFentry:
    case AttachType::kFexit:
      return open_family<tb_fentry>(tb_fentry__open_opts, tb_fentry__load, tb_fentry__destroy, cfg, out);
    case AttachType::kKprobe:
      return open_family<tb_kprobe>(tb_kprobe__open_opts, tb_kprobe__load, tb_kprobe__destroy, cfg, out);
    case AttachType::kPerfEvent:
      return open_family<tb_perf_event>(tb_perf_event__open_opts, tb_perf_event__load, tb_perf_event__destroy, cfg,
                                        out);
  }
  return Status::error("unknown attach type");
}

}  // namespace tracebench::ebpf
