// SPDX-License-Identifier: GPL-2.0
// The D-VM's DIF core behind plain C functions (dif_glue.h), for the module
// (and, unchanged, for its tests in user space: tests/kmod/kmod_dvm_test.cc).
// Compiled as freestanding C++ with the kernel's flags (Kbuild); it includes
// the core and nothing of the kernel.
#include "dif_glue.h"

#include <new>

#include "module_host.h"
#include "core/vm.h"

static_assert(sizeof(tbdvm::Insn) == TB_DIF_INSN_SIZE, "DIF instruction layout");
static_assert(TB_DIF_MAX_INSNS == tbdvm::kMaxInsns,
	      "the glue's instruction limit is the verifier's");

extern "C" unsigned long tb_dif_verify_work_size(void)
{
	return sizeof(tbdvm::VerifyWork);
}

namespace
{

tbdvm::Program program_of(const struct tb_dif_object *o)
{
	tbdvm::Program p;
	p.insns = static_cast<const tbdvm::Insn *>(o->insns);
	p.ninsns = o->n_insns;
	p.inttab = static_cast<const uint64_t *>(o->ints);
	p.nints = o->n_ints;
	p.strtab = o->strtab;
	p.strtab_len = o->strtab_len;
	p.returns_string = o->returns_string != 0;
	return p;
}

} // namespace

extern "C" int tb_dif_verify(const struct tb_dif_object *o, void *work, unsigned int *pc,
			     const char **rule)
{
	const tbdvm::Program p = program_of(o);
	const tbdvm::VerifyError e = tbdvm::dif_verify(&p, static_cast<tbdvm::VerifyWork *>(work));
	*pc = e.pc;
	*rule = e.rule;
	return e.rule ? 1 : 0;
}

namespace
{

using namespace tbdvm;

constexpr uint32_t kScratch = 4096, kChunks = 64, kBuckets = 64, kBuf = 4096, kAgg = 16384,
		   kAggBuckets = 64;
const char kNames[] = "tracebench\0dif\0exec\0run";

// Everything a run touches, in the caller's memory: no allocation.
struct ExecWorld {
	SpinLock lock;
	Slot slot;
	State st;
	Probe probe;
	FireArgs fa;
	MState ms;
	uint8_t scratch[kScratch];
	uint64_t gvals[kMaxGlobals];
	uint8_t gstr[kMaxGlobals * TB_DIF_STR_MAX];
	uint32_t buckets[kBuckets];
	uint8_t buf[2 * kBuf];
	uint8_t agg[kAgg];
	uint32_t aggb[kAggBuckets];
	// kChunks dynamic-variable chunks follow
};

unsigned long chunk_bytes()
{
	return dynvar_chunk_bytes(TB_DIF_STR_MAX);
}

} // namespace

extern "C" unsigned long tb_dif_exec_work_size(void)
{
	return sizeof(ExecWorld) + kChunks * chunk_bytes();
}

extern "C" void tb_dif_exec(const struct tb_dif_object *o, void *work,
			    const unsigned long long *args, unsigned long long pid,
			    unsigned long long tid, const char *execname, struct tb_dif_result *out)
{
	ExecWorld *w = new (work) ExecWorld();
	State &st = w->st;
	tb_module_host::install(&st.host);
	st.host.pid = pid;
	st.strsize = TB_DIF_STR_MAX;
	for (uint32_t i = 0; i + 1 < sizeof st.execname && execname[i]; i++)
		st.execname[i] = execname[i];
	Slot &slot = w->slot;
	slot.lock = &w->lock;
	slot.scratch = w->scratch;
	slot.scratch_size = kScratch;
	slot.buf.data[0] = w->buf;
	slot.buf.data[1] = w->buf + kBuf;
	slot.buf.size = kBuf;
	slot.agg.arena = w->agg;
	slot.agg.size = kAgg;
	slot.agg.used = 8;
	slot.agg.buckets = w->aggb;
	slot.agg.nbuckets = kAggBuckets;
	st.slots = &slot;
	st.nslots = 1;
	dynvar_init(&st.dyn, reinterpret_cast<uint8_t *>(w + 1),
		    static_cast<uint32_t>(chunk_bytes()), kChunks, w->buckets, kBuckets);
	st.gvals = w->gvals;
	st.gstr = w->gstr;
	Probe &probe = w->probe;
	probe.names = kNames;
	probe.names_len = sizeof kNames;
	probe.provider = kNames;
	probe.module = kNames + 11;
	probe.function = kNames + 15;
	probe.name = kNames + 20;
	for (uint32_t i = 0; i < kMaxArgs; i++)
		w->fa.args[i] = args[i];
	w->fa.tid = tid;

	const Program p = program_of(o);
	MState *ms = &w->ms;
	dvm_prepare_firing(ms, &st, &slot, &probe, &w->fa);
	dvm_prepare_ecb(ms, &slot, 1);
	out->value = dif_exec(&p, ms);
	out->fault = ms->fault;
	out->str_len = 0;
	out->str[0] = '\0';
	// A string result: its bytes, as far as they are readable and NUL-ended
	// within the string size (what trace() would record).
	if (p.returns_string && ms->fault == kFaultNone) {
		const uint64_t n = dvm_strlen(ms, out->value);
		if (ms->fault == kFaultNone) {
			const uint32_t len = n < TB_DIF_STR_MAX - 1 ? static_cast<uint32_t>(n)
								    : TB_DIF_STR_MAX - 1;
			const char *s = reinterpret_cast<const char *>(out->value);
			for (uint32_t i = 0; i < len; i++)
				out->str[i] = s[i];
			out->str[len] = '\0';
			out->str_len = len;
		}
		out->fault = ms->fault;
	}
}
