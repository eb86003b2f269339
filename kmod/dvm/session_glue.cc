// SPDX-License-Identifier: GPL-2.0
// A D-VM tracing session inside the module, built on the DIF core: the
// probes, ECBs, actions and per-CPU slots of one DVM_ENABLE, checked against
// what the core trusts (dif_glue.h: tb_dvm_session_*).  Memory comes from
// the host (tb_dvm_host_zalloc), at enable time only; a firing allocates
// nothing.
#include <new>

#include "dif_glue.h"
#include "include/tracebench_kmod_abi.h"
#include "module_host.h"
#include "core/vm.h"

static_assert(TB_KMOD_DVM_FAULTS >= tbdvm::kFaultCount, "the status carries every fault kind");
static_assert(TB_KMOD_DIF_MAX_ARGS == tbdvm::kMaxArgs, "arg0..arg9");
static_assert(TB_KMOD_DVM_AGG_KEY_MAX == tbdvm::kAggKeyMax,
	      "DVM_AGGRESET carries a whole aggregation key");

using namespace tbdvm;

namespace
{

constexpr uint32_t kAggBuckets = 1024;

template <typename T> T *zalloc(uint64_t n)
{
	if (n == 0)
		n = 1;
	void *p = tb_dvm_host_zalloc(n * sizeof(T));
	return static_cast<T *>(p);
}

} // namespace

struct tb_dvm_session {
	State st;
	SpinLock unused_lock; // a slot's lock: the module masks interrupts instead
	Slot *slots = nullptr;
	uint32_t nslots = 0;
	Program *progs = nullptr;
	uint32_t nprogs = 0;
	const Program **keys = nullptr;
	Action *actions = nullptr;
	uint32_t nactions = 0;
	Ecb *ecbs = nullptr;
	Ecb **ecb_ptrs = nullptr; // grouped by probe
	Probe *probes = nullptr;
	char *names = nullptr; // TB_KMOD_DVM_NAMES_LEN per probe
	uint32_t nprobes = 0;
	uint8_t *slot_memory = nullptr;
	uint8_t *dyn_chunks = nullptr;
	uint32_t *dyn_buckets = nullptr;
	uint64_t *gvals = nullptr;
	uint8_t *gstr = nullptr;
};

namespace
{

const char *check_action(const tb_kmod_dvm_action &a, uint32_t n_objects, uint32_t n_keys,
			 const Program *progs, uint32_t strsize)
{
	if (a.reserved)
		return "action: reserved field not zero";
	if (a.value > n_objects)
		return "action: value object out of range";
	if (a.nkeys > kMaxTuple)
		return "action: more than 8 aggregation keys";
	if (a.keys_first > n_keys || a.nkeys > n_keys - a.keys_first)
		return "action: keys out of range";
	const Program *v = a.value ? &progs[a.value - 1] : nullptr;
	switch (a.kind) {
	case kActDifExpr:
		if (!v)
			return "action: an expression without its object";
		if (a.size)
			return "action: an expression records nothing";
		return nullptr;
	case kActTrace:
	case kActPrintf:
	case kActExit:
		if (!v)
			return a.kind == kActTrace ? "action: trace() without its object" : nullptr;
		if (v->returns_string ? (a.size < 1 || a.size > strsize) : a.size != 8)
			return "action: record size does not fit the value's type";
		return nullptr;
	case kActTracemem:
		if (!v)
			return "action: tracemem() without its object";
		if (v->returns_string)
			return "action: tracemem() of a string";
		return nullptr;
	case kActStack:
		if (a.size % 8)
			return "action: stack() size not a multiple of 8";
		return nullptr;
	case kActAggregate: {
		if (a.size)
			return "action: an aggregation records nothing";
		if (a.agg_kind < kAggCount || a.agg_kind >= kAggKindEnd)
			return "action: unknown aggregating function";
		if (a.agg_kind == kAggLquantize) {
			int64_t span;
			if (a.lq_step <= 0 || a.lq_limit <= a.lq_base ||
			    __builtin_sub_overflow(a.lq_limit, a.lq_base, &span))
				return "action: lquantize() needs limit > base and step > 0";
			if (span / a.lq_step > 4096)
				return "action: lquantize() with more than 4096 buckets";
		}
		if (a.agg_kind == kAggLlquantize &&
		    agg_nvals(a.agg_kind, a.lq_base, a.lq_limit, a.lq_step) == 0)
			return "action: llquantize() parameters refused (factor, magnitudes, steps "
			       "or more than 4096 buckets)";
		if (a.agg_kind != kAggCount && !v)
			return "action: aggregating function without its value";
		return nullptr;
	}
	default:
		return "action: unknown kind";
	}
}

} // namespace

namespace
{

// Each check returns why the request is refused and sets *index to what it
// names, or returns nullptr.
const char *check_key_objects(const tb_kmod_dvm_enable *req, const unsigned int *key_objects,
			      uint32_t *index)
{
	for (uint32_t i = 0; i < req->n_key_objects; i++) {
		*index = i;
		if (key_objects[i] == 0 || key_objects[i] > req->n_objects)
			return "key object out of range";
	}
	return nullptr;
}

const char *check_actions(const tb_kmod_dvm_enable *req, const tb_kmod_dvm_action *acts,
			  const Program *progs, uint32_t *index)
{
	for (uint32_t i = 0; i < req->n_actions; i++) {
		*index = i;
		if (const char *why = check_action(acts[i], req->n_objects, req->n_key_objects,
						   progs, req->strsize))
			return why;
	}
	return nullptr;
}

// An action that records lies inside its ECB's record, after the header.
bool action_fits_record(const tb_kmod_dvm_action &a, uint32_t record_size)
{
	const bool records = a.kind == kActTrace || a.kind == kActPrintf || a.kind == kActExit ||
			     a.kind == kActTracemem || a.kind == kActStack;
	if (!records || !(a.size || a.kind == kActTracemem || a.kind == kActStack))
		return true;
	return a.offset >= sizeof(RecordHeader) && a.offset <= record_size &&
	       a.size <= record_size - a.offset;
}

const char *check_ecb(const tb_kmod_dvm_enable *req, const tb_kmod_dvm_ecb &e, uint32_t i,
		      const tb_kmod_dvm_action *acts, const Program *progs)
{
	if (e.epid != i + 1)
		return "ECB: epid is not its index + 1";
	if (e.probe >= req->n_probes)
		return "ECB: probe out of range";
	if (e.predicate > req->n_objects)
		return "ECB: predicate object out of range";
	if (e.predicate && progs[e.predicate - 1].returns_string)
		return "ECB: a predicate returns an integer";
	if (e.actions_first > req->n_actions || e.nactions > req->n_actions - e.actions_first)
		return "ECB: actions out of range";
	if (e.record_size % 8 || e.record_size > req->bufsize ||
	    (e.record_size && e.record_size < sizeof(RecordHeader)))
		return "ECB: record size not a multiple of 8 within bufsize";
	for (uint32_t k = 0; k < e.nactions; k++)
		if (!action_fits_record(acts[e.actions_first + k], e.record_size))
			return "ECB: an action's data lies outside its record";
	return nullptr;
}

const char *check_ecbs(const tb_kmod_dvm_enable *req, const tb_kmod_dvm_ecb *ecbs,
		       const tb_kmod_dvm_action *acts, const Program *progs, uint32_t *index)
{
	for (uint32_t i = 0; i < req->n_ecbs; i++) {
		*index = i;
		if (const char *why = check_ecb(req, ecbs[i], i, acts, progs))
			return why;
	}
	return nullptr;
}

const char *check_probes(const tb_kmod_dvm_enable *req, const tb_kmod_dvm_probe *probes,
			 uint32_t *index)
{
	for (uint32_t i = 0; i < req->n_probes; i++) {
		const tb_kmod_dvm_probe &p = probes[i];
		*index = i;
		if (p.names_len == 0 || p.names_len > TB_KMOD_DVM_NAMES_LEN ||
		    p.names[p.names_len - 1] != '\0')
			return "probe: names not NUL-terminated within their length";
		uint32_t fields = 0;
		for (uint32_t k = 0; k < p.names_len; k++)
			fields += p.names[k] == '\0';
		if (fields != 4)
			return "probe: names are not provider, module, function and name";
	}
	return nullptr;
}

void load_programs(tb_dvm_session *s, const tb_kmod_dvm_enable *req, const tb_dif_object *objs)
{
	for (uint32_t i = 0; i < req->n_objects; i++) {
		Program &p = s->progs[i];
		p.insns = static_cast<const Insn *>(objs[i].insns);
		p.ninsns = objs[i].n_insns;
		p.inttab = static_cast<const uint64_t *>(objs[i].ints);
		p.nints = objs[i].n_ints;
		p.strtab = objs[i].strtab;
		p.strtab_len = objs[i].strtab_len;
		p.returns_string = objs[i].returns_string != 0;
	}
}

// The dynamic variables' chunks and hash buckets (a power of two).
struct DynLayout {
	uint32_t chunk_bytes, nchunks, nbuckets;
};

DynLayout dyn_layout(const tb_kmod_dvm_enable *req)
{
	DynLayout d{dynvar_chunk_bytes(req->strsize), 0, 1};
	d.nchunks = req->dynvarsize / d.chunk_bytes;
	if (d.nchunks == 0)
		d.nchunks = 1;
	while (d.nbuckets < d.nchunks)
		d.nbuckets <<= 1;
	return d;
}

// Every table and the per-CPU slots' memory; false when any is missing.
bool allocate_tables(tb_dvm_session *s, const tb_kmod_dvm_enable *req, unsigned int ncpus,
		     const DynLayout &d)
{
	s->keys = zalloc<const Program *>(req->n_key_objects);
	s->actions = zalloc<Action>(req->n_actions);
	s->ecbs = zalloc<Ecb>(req->n_ecbs);
	s->ecb_ptrs = zalloc<Ecb *>(req->n_ecbs);
	s->probes = zalloc<Probe>(req->n_probes);
	s->names = zalloc<char>(static_cast<uint64_t>(req->n_probes) * TB_KMOD_DVM_NAMES_LEN);
	s->slots = zalloc<Slot>(ncpus);
	const uint64_t per_slot =
		2ull * req->bufsize + req->aggsize + kAggBuckets * 4ull + req->scratchsize;
	s->slot_memory = zalloc<uint8_t>(per_slot * ncpus);
	s->dyn_chunks = zalloc<uint8_t>(static_cast<uint64_t>(d.nchunks) * d.chunk_bytes);
	s->dyn_buckets = zalloc<uint32_t>(d.nbuckets);
	s->gvals = zalloc<uint64_t>(kMaxGlobals);
	s->gstr = zalloc<uint8_t>(static_cast<uint64_t>(kMaxGlobals) * req->strsize);
	return s->keys && s->actions && s->ecbs && s->ecb_ptrs && s->probes && s->names &&
	       s->slots && s->slot_memory && s->dyn_chunks && s->dyn_buckets && s->gvals && s->gstr;
}

// The keys, actions and ECBs, pointing at the programs and at each other.
void link_tables(tb_dvm_session *s, const tb_kmod_dvm_enable *req, const unsigned int *key_objects,
		 const tb_kmod_dvm_action *acts, const tb_kmod_dvm_ecb *ecbs)
{
	for (uint32_t i = 0; i < req->n_key_objects; i++)
		s->keys[i] = &s->progs[key_objects[i] - 1];
	for (uint32_t i = 0; i < req->n_actions; i++) {
		const tb_kmod_dvm_action &a = acts[i];
		Action &x = s->actions[i];
		x.kind = a.kind;
		x.agg_kind = a.agg_kind;
		x.value = a.value ? &s->progs[a.value - 1] : nullptr;
		x.keys = a.nkeys ? &s->keys[a.keys_first] : nullptr;
		x.nkeys = a.nkeys;
		x.agg_id = a.agg_id;
		x.offset = a.offset;
		x.size = a.size;
		x.lq_base = a.lq_base;
		x.lq_limit = a.lq_limit;
		x.lq_step = a.lq_step;
		x.format_id = a.format_id;
		x.arg_index = a.arg_index;
	}
	s->nactions = req->n_actions;
	for (uint32_t i = 0; i < req->n_ecbs; i++) {
		Ecb &e = s->ecbs[i];
		e.epid = ecbs[i].epid;
		e.predicate = ecbs[i].predicate ? &s->progs[ecbs[i].predicate - 1] : nullptr;
		e.actions = &s->actions[ecbs[i].actions_first];
		e.nactions = ecbs[i].nactions;
		e.record_size = ecbs[i].record_size;
	}
}

// Each probe with its names split into their four fields and its ECBs,
// grouped in epid order (the order they fire in).
void group_probes(tb_dvm_session *s, const tb_kmod_dvm_enable *req, const tb_kmod_dvm_ecb *ecbs,
		  const tb_kmod_dvm_probe *probes)
{
	s->nprobes = req->n_probes;
	uint32_t at = 0;
	for (uint32_t p = 0; p < req->n_probes; p++) {
		Probe &pr = s->probes[p];
		char *names = s->names + static_cast<uint64_t>(p) * TB_KMOD_DVM_NAMES_LEN;
		for (uint32_t k = 0; k < probes[p].names_len; k++)
			names[k] = probes[p].names[k];
		pr.id = probes[p].id;
		pr.names = names;
		pr.names_len = probes[p].names_len;
		pr.provider = names;
		const char *f = names;
		const char **fields[3] = {&pr.module, &pr.function, &pr.name};
		for (auto *field : fields) {
			while (*f)
				f++;
			*field = ++f;
		}
		pr.ecbs = &s->ecb_ptrs[at];
		for (uint32_t i = 0; i < req->n_ecbs; i++)
			if (ecbs[i].probe == p)
				s->ecb_ptrs[at++] = &s->ecbs[i];
		pr.necbs = static_cast<uint32_t>(&s->ecb_ptrs[at] - pr.ecbs);
		if (probes[p].kind == TB_KMOD_DVM_PROBE_ERROR)
			s->st.error_probe = &pr;
	}
}

// The per-CPU slots carved out of slot_memory: two buffers, the
// aggregation arena and its buckets, the scratch space.
void lay_out_slots(tb_dvm_session *s, const tb_kmod_dvm_enable *req, unsigned int ncpus)
{
	uint8_t *m = s->slot_memory;
	for (uint32_t i = 0; i < ncpus; i++) {
		Slot *slot = new (&s->slots[i]) Slot();
		slot->lock = &s->unused_lock;
		slot->buf.data[0] = m;
		m += req->bufsize;
		slot->buf.data[1] = m;
		m += req->bufsize;
		slot->buf.size = req->bufsize;
		slot->agg.arena = m;
		m += req->aggsize;
		slot->agg.size = req->aggsize;
		slot->agg.used = 8; // offset 0 means "end of chain"
		slot->agg.buckets = reinterpret_cast<uint32_t *>(m);
		m += kAggBuckets * 4ull;
		slot->agg.nbuckets = kAggBuckets;
		slot->scratch = m;
		m += req->scratchsize;
		slot->scratch_size = req->scratchsize;
		slot->ms.rand_state = 0x9e3779b97f4a7c15ull * (i + 1);
	}
	s->nslots = ncpus;
}

} // namespace

// Everything the core will trust is checked before the tables are
// allocated (the programs first: the actions' type checks read them), and a
// refusal names the index of what was refused; the kernel home's
// counterpart of Session::enable.
extern "C" struct tb_dvm_session *
tb_dvm_session_build(const struct tb_kmod_dvm_enable *req, const struct tb_dif_object *objs,
		     const unsigned int *key_objects, const struct tb_kmod_dvm_action *acts,
		     const struct tb_kmod_dvm_ecb *ecbs, const struct tb_kmod_dvm_probe *probes,
		     unsigned int ncpus, const char **err, unsigned int *err_index)
{
	uint32_t index = 0;
	*err_index = 0;
	*err = check_key_objects(req, key_objects, &index);
	if (*err) {
		*err_index = index;
		return nullptr;
	}
	auto *s = zalloc<tb_dvm_session>(1);
	if (s) {
		new (s) tb_dvm_session();
		s->nprogs = req->n_objects;
		s->progs = zalloc<Program>(req->n_objects);
	}
	if (!s || !s->progs) {
		tb_dvm_session_free(s);
		*err = "out of memory";
		return nullptr;
	}
	load_programs(s, req, objs);
	*err = check_actions(req, acts, s->progs, &index);
	if (!*err)
		*err = check_ecbs(req, ecbs, acts, s->progs, &index);
	if (!*err)
		*err = check_probes(req, probes, &index);
	if (*err) {
		*err_index = index;
		tb_dvm_session_free(s);
		return nullptr;
	}
	const DynLayout dyn = dyn_layout(req);
	if (!allocate_tables(s, req, ncpus, dyn)) {
		tb_dvm_session_free(s);
		*err = "out of memory for the D-VM's buffers (lower bufsize, aggsize or "
		       "dynvarsize)";
		return nullptr;
	}
	link_tables(s, req, key_objects, acts, ecbs);
	group_probes(s, req, ecbs, probes);
	lay_out_slots(s, req, ncpus);
	State &st = s->st;
	tb_module_host::install(&st.host);
	st.strsize = req->strsize;
	st.slots = s->slots;
	st.nslots = ncpus;
	dynvar_init(&st.dyn, s->dyn_chunks, dyn.chunk_bytes, dyn.nchunks, s->dyn_buckets,
		    dyn.nbuckets);
	st.gvals = s->gvals;
	st.gstr = s->gstr;
	return s;
}

extern "C" void tb_dvm_session_free(struct tb_dvm_session *s)
{
	if (!s)
		return;
	tb_dvm_host_free(s->gstr);
	tb_dvm_host_free(s->gvals);
	tb_dvm_host_free(s->dyn_buckets);
	tb_dvm_host_free(s->dyn_chunks);
	tb_dvm_host_free(s->slot_memory);
	tb_dvm_host_free(s->slots);
	tb_dvm_host_free(s->names);
	tb_dvm_host_free(s->probes);
	tb_dvm_host_free(s->ecb_ptrs);
	tb_dvm_host_free(s->ecbs);
	tb_dvm_host_free(s->actions);
	tb_dvm_host_free(s->keys);
	tb_dvm_host_free(s->progs);
	tb_dvm_host_free(s);
}

extern "C" void tb_dvm_fire(struct tb_dvm_session *s, unsigned int probe,
			    const unsigned long long *args, unsigned int nargs,
			    const struct tb_dvm_who *who, unsigned int cpu)
{
	tb_dvm_fire_region(s, probe, args, nargs, 0, 0, who, cpu);
}

extern "C" void tb_dvm_fire_region(struct tb_dvm_session *s, unsigned int probe,
				   const unsigned long long *args, unsigned int nargs,
				   unsigned long long base, unsigned long long len,
				   const struct tb_dvm_who *who, unsigned int cpu)
{
	if (probe >= s->nprobes || cpu >= s->nslots)
		return;
	FireArgs fa;
	for (uint32_t i = 0; i < nargs && i < kMaxArgs; i++)
		fa.args[i] = args[i];
	fa.region.base = base;
	fa.region.len = len;
	fa.tid = who->tid;
	fa.thread = who->thread;
	Who w;
	w.pid = who->pid;
	w.ppid = who->ppid;
	w.uid = who->uid;
	w.execname = who->comm;
	w.errno_value = who->err;
	fa.who = &w;
	dvm_fire_locked(&s->st, &s->probes[probe], &fa, cpu);
}

extern "C" int tb_dvm_agg_kind(const struct tb_dvm_session *s, unsigned int agg_id)
{
	for (uint32_t i = 0; i < s->nactions; i++)
		if (s->actions[i].kind == kActAggregate && s->actions[i].agg_id == agg_id)
			return s->actions[i].agg_kind;
	return -1;
}

extern "C" unsigned int tb_dvm_agg_reset(struct tb_dvm_session *s, unsigned int cpu,
					 unsigned int agg_id, int kind, const void *key,
					 unsigned int keylen, int unlink)
{
	if (cpu >= s->nslots || kind < 0)
		return 0;
	return dvm_agg_reset(&s->slots[cpu].agg, agg_id, static_cast<uint16_t>(kind),
			     static_cast<const uint8_t *>(key), keylen, unlink != 0);
}

extern "C" void tb_dvm_busy_drop(struct tb_dvm_session *s, unsigned int cpu)
{
	if (cpu < s->nslots)
		s->slots[cpu].busy_drops.fetch_add(1, std::memory_order_relaxed);
}

extern "C" void tb_dvm_buffer_switch(struct tb_dvm_session *s, unsigned int cpu, const void **data,
				     unsigned int *len)
{
	const uint8_t *d = nullptr;
	uint32_t n = 0;
	if (cpu < s->nslots)
		dvm_buffer_switch_locked(&s->st, cpu, &d, &n);
	*data = d;
	*len = n;
}

extern "C" unsigned int tb_dvm_buffer_pending(const struct tb_dvm_session *s, unsigned int cpu)
{
	if (cpu >= s->nslots)
		return 0;
	const PrincipalBuffer &b = s->slots[cpu].buf;
	return __atomic_load_n(&b.offset[__atomic_load_n(&b.active, __ATOMIC_RELAXED) & 1u],
			       __ATOMIC_RELAXED);
}

extern "C" unsigned int tb_dvm_agg_copy(struct tb_dvm_session *s, unsigned int cpu, void *dst,
					unsigned int cap)
{
	if (cpu >= s->nslots)
		return 0;
	const AggBuffer &a = s->slots[cpu].agg;
	const uint32_t n = a.used < cap ? a.used : cap;
	__builtin_memcpy(dst, a.arena, n);
	return n;
}

extern "C" void tb_dvm_status(const struct tb_dvm_session *s, unsigned int cpu,
			      struct tb_kmod_dvm_status *out)
{
	for (uint32_t i = 0; i < s->nslots; i++) {
		if (cpu != ~0u && cpu != i)
			continue;
		const Slot &x = s->slots[i];
		out->fired += x.fired.load(std::memory_order_relaxed);
		out->ecb_fired += x.ecb_fired.load(std::memory_order_relaxed);
		out->drops += x.drops.load(std::memory_order_relaxed);
		out->agg_drops += x.agg_drops.load(std::memory_order_relaxed);
		out->busy_drops += x.busy_drops.load(std::memory_order_relaxed);
		out->errors += x.errors.load(std::memory_order_relaxed);
		for (uint32_t f = 0; f < kFaultCount; f++)
			out->faults[f] += x.faults[f].load(std::memory_order_relaxed);
	}
	out->exit_requested = s->st.exit_requested.load(std::memory_order_relaxed) ? 1 : 0;
}
