/* Constants shared by the BPF programs and the C++ adapter (C and C++). */
#ifndef TRACEBENCH_EBPF_TB_SHARED_H
#define TRACEBENCH_EBPF_TB_SHARED_H

/* Largest record the ringbuf/perfbuf actions write; a multiple of 8. */
#define TB_MAX_RECORD_BYTES 4096
#define TB_MAX_RECORD_WORDS (TB_MAX_RECORD_BYTES / 8)
/* Record word i (i >= 1) is (tid * TB_PATTERN_MUL) ^ i; word 0 is
 * (tid << 32) | record_bytes.  The consumer checks every byte. */
#define TB_PATTERN_MUL 0x9E3779B97F4A7C15ULL

#endif
