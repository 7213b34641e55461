// Test support only: counts heap allocations made by the calling thread, to prove that the core's hot
// path allocates nothing once warm. Interposes malloc and friends for the whole test process; the
// count is per thread, so tests running in parallel on other threads do not disturb it.
#pragma once
#include <stdint.h>

/// The number of malloc/calloc/realloc/aligned allocations made so far by the calling thread.
uint64_t allocation_counter_thread_count(void);
