// Package tune sets up the C allocator for a program that makes a few Z3
// contexts and exits: a program imports it for its side effect
// (import _ ".../z3/tune"), a library never does. It is part of the
// binding (package z3), the only other place that imports "C".
//
// Every Z3 context allocates and fills an 8 MB table when it is
// made; on this project's virtual machines faulting in its pages cost
// 40–80 ms per context, most of a small search's time (k-shape makes 2).
// So, for this program only (a library must not change process-wide
// allocator settings):
//
//   - one heap for every thread (M_ARENA_MAX 1): Go moves goroutines
//     between threads, and memory freed into one thread's arena is not
//     reused by another;
//   - Z3's tables come from that heap and stay there once freed (mmap
//     and trim thresholds), so a later context finds its pages mapped;
//   - the heap is grown once and backed by transparent huge pages where
//     the kernel grants them on request ("madvise" mode): one fault per
//     2 MB instead of 512. Untouched pages cost nothing.
//
// It runs as a C constructor, before the Go runtime starts its threads:
// a thread that has already allocated keeps its own arena.
package tune

/*
#include <stdint.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((constructor)) static void tessel_tune_allocator(void) {
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	uintptr_t lo = (uintptr_t)sbrk(0);
	void *p = malloc(56 << 20);
	if (p == NULL) {
		return;
	}
	free(p);
	uintptr_t hi = (uintptr_t)sbrk(0);
	const uintptr_t huge = 2 << 20;
	if (lo == (uintptr_t)-1 || hi == (uintptr_t)-1) {
		return;
	}
	lo = (lo + huge - 1) & ~(huge - 1);
	hi &= ~(huge - 1);
	if (hi > lo) {
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
}
#endif
*/
import "C"
