// Interposes the glibc allocation functions: each forwards to glibc's own implementation (`__libc_*`)
// and counts the call in a thread-local counter. Frees are not counted.
#include "AllocationCounter.h"
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static __thread uint64_t thread_count;

uint64_t allocation_counter_thread_count(void) { return thread_count; }

void *malloc(size_t size) {
    thread_count++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    thread_count++;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    thread_count++;
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    thread_count++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    thread_count++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    thread_count++;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *result = p;
    return 0;
}
