// The release `gleaner` runs on the glibc of the servers people have
// (2.28 on RHEL 8, 2.31 on Debian 11 and Ubuntu 20.04, 2.35 on Ubuntu
// 22.04), though it is built on Debian 12 (2.36). A program linked against
// a newer glibc asks for the newest version of each symbol it uses; the
// linker is told (--wrap, cmake/OldGlibc.cmake) to send every
// reference to a symbol newer than 2.28 here instead, where it calls the
// version older glibcs have, or, for the few they lack, does the same
// work itself (the program's start: old_glibc_start.cc).
// tests/static_binary_test.sh fails when a new one appears, and
// tests/old_glibc_test.sh runs the binary on Debian 11.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>

// `name` at glibc's first version of it on x86-64, callable as old_name.
#define GLEANER_OLD(name, version) __asm__(".symver old_" #name "," #name "@" version)

extern "C" {

// --- Moved from libpthread and libdl into libc in 2.34: the old versions
// live on in libpthread.so.0 and libdl.so.2, which the binary also names
// (DT_NEEDED) so that old glibcs load them.
#define GLEANER_FORWARD(ret, name, version, params, args) \
  ret old_##name params;                                  \
  GLEANER_OLD(name, version);                             \
  ret __wrap_##name params { return old_##name args; }

GLEANER_FORWARD(int, pthread_create, "GLIBC_2.2.5",
                (pthread_t * t, const pthread_attr_t* a, void* (*f)(void*), void* arg),
                (t, a, f, arg))
GLEANER_FORWARD(int, pthread_detach, "GLIBC_2.2.5", (pthread_t t), (t))
GLEANER_FORWARD(int, pthread_join, "GLIBC_2.2.5", (pthread_t t, void** r), (t, r))
GLEANER_FORWARD(void*, pthread_getspecific, "GLIBC_2.2.5", (pthread_key_t k), (k))
GLEANER_FORWARD(int, pthread_setspecific, "GLIBC_2.2.5", (pthread_key_t k, const void* v), (k, v))
GLEANER_FORWARD(int, pthread_key_create, "GLIBC_2.2.5", (pthread_key_t * k, void (*d)(void*)),
                (k, d))
GLEANER_FORWARD(int, __pthread_key_create, "GLIBC_2.2.5", (pthread_key_t * k, void (*d)(void*)),
                (k, d))
GLEANER_FORWARD(int, pthread_key_delete, "GLIBC_2.2.5", (pthread_key_t k), (k))
GLEANER_FORWARD(int, pthread_once, "GLIBC_2.2.5", (pthread_once_t * o, void (*f)(void)), (o, f))
GLEANER_FORWARD(int, pthread_mutex_trylock, "GLIBC_2.2.5", (pthread_mutex_t * m), (m))
GLEANER_FORWARD(int, pthread_mutexattr_init, "GLIBC_2.2.5", (pthread_mutexattr_t * a), (a))
GLEANER_FORWARD(int, pthread_mutexattr_destroy, "GLIBC_2.2.5", (pthread_mutexattr_t * a), (a))
GLEANER_FORWARD(int, pthread_mutexattr_settype, "GLIBC_2.2.5", (pthread_mutexattr_t * a, int k),
                (a, k))
GLEANER_FORWARD(int, pthread_rwlock_init, "GLIBC_2.2.5",
                (pthread_rwlock_t * l, const pthread_rwlockattr_t* a), (l, a))
GLEANER_FORWARD(int, pthread_rwlock_destroy, "GLIBC_2.2.5", (pthread_rwlock_t * l), (l))
GLEANER_FORWARD(int, pthread_rwlock_rdlock, "GLIBC_2.2.5", (pthread_rwlock_t * l), (l))
GLEANER_FORWARD(int, pthread_rwlock_wrlock, "GLIBC_2.2.5", (pthread_rwlock_t * l), (l))
GLEANER_FORWARD(int, pthread_rwlock_unlock, "GLIBC_2.2.5", (pthread_rwlock_t * l), (l))
GLEANER_FORWARD(void*, dlopen, "GLIBC_2.2.5", (const char* f, int m), (f, m))
GLEANER_FORWARD(int, dlclose, "GLIBC_2.2.5", (void* h), (h))
GLEANER_FORWARD(char*, dlerror, "GLIBC_2.2.5", (void), ())
GLEANER_FORWARD(void*, dlsym, "GLIBC_2.2.5", (void* h, const char* s), (h, s))
GLEANER_FORWARD(int, dladdr, "GLIBC_2.2.5", (const void* a, Dl_info* i), (a, i))

// --- libm's exp, exp2, log and pow got new versions in 2.29 (without the
// old error handling, which gleaner does not use).
GLEANER_FORWARD(double, exp, "GLIBC_2.2.5", (double x), (x))
GLEANER_FORWARD(double, exp2, "GLIBC_2.2.5", (double x), (x))
GLEANER_FORWARD(double, log, "GLIBC_2.2.5", (double x), (x))
GLEANER_FORWARD(double, pow, "GLIBC_2.2.5", (double x, double y), (x, y))

// --- stat and friends became functions of their own in 2.33; before, they
// were __xstat with the structure's version (1 on x86-64).
#define GLEANER_XSTAT(name, old, arg_type, struct_type)              \
  int old_##old(int version, arg_type arg, struct struct_type* buf); \
  GLEANER_OLD(old, "GLIBC_2.2.5");                                   \
  int __wrap_##name(arg_type arg, struct struct_type* buf) { return old_##old(1, arg, buf); }

GLEANER_XSTAT(stat, __xstat, const char*, stat)
GLEANER_XSTAT(lstat, __lxstat, const char*, stat)
GLEANER_XSTAT(fstat, __fxstat, int, stat)
GLEANER_XSTAT(stat64, __xstat64, const char*, stat64)
GLEANER_XSTAT(lstat64, __lxstat64, const char*, stat64)
GLEANER_XSTAT(fstat64, __fxstat64, int, stat64)

// --- New in 2.30 (std::condition_variable waits by the steady clock with
// it): the glibc's own where it has one; before, a wait by the wall clock
// until the same moment, read now.
using ClockWait = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
void* old_dlvsym(void* handle, const char* symbol, const char* version);
GLEANER_OLD(dlvsym, "GLIBC_2.2.5");

int __wrap_pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                                  const struct timespec* deadline) {
  static const ClockWait own =
      reinterpret_cast<ClockWait>(old_dlvsym(RTLD_DEFAULT, "pthread_cond_clockwait", "GLIBC_2.30"));
  if (own != nullptr) return own(c, m, clock, deadline);
  if (clock == CLOCK_REALTIME) return pthread_cond_timedwait(c, m, deadline);
  struct timespec now_clock = {};
  struct timespec now_wall = {};
  clock_gettime(clock, &now_clock);
  clock_gettime(CLOCK_REALTIME, &now_wall);
  const int64_t left_ns = (deadline->tv_sec - now_clock.tv_sec) * 1'000'000'000 +
                          (deadline->tv_nsec - now_clock.tv_nsec);
  const int64_t at_ns =
      now_wall.tv_sec * int64_t{1'000'000'000} + now_wall.tv_nsec + (left_ns > 0 ? left_ns : 0);
  const struct timespec wall_deadline { at_ns / 1'000'000'000, at_ns % 1'000'000'000 };
  return pthread_cond_timedwait(c, m, &wall_deadline);
}

// --- New in 2.32: whether the process has one thread, which lets
// libstdc++ skip atomic operations. Always "no" is always safe.
char __wrap___libc_single_threaded = 0;

// --- New in 2.34; on an older glibc, the system call itself (ENOSYS on a
// kernel before 5.9, which the caller handles).
int __wrap_close_range(unsigned int first, unsigned int last, int flags) {
  return static_cast<int>(syscall(SYS_close_range, first, last, flags));
}

// --- New in 2.36: 32 random bits, for std::random_device.
uint32_t __wrap_arc4random(void) {
  uint32_t v = 0;
  size_t got = 0;
  while (got < sizeof v) {
    const ssize_t n = getrandom(reinterpret_cast<char*>(&v) + got, sizeof v - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  return v;
}

// --- New in 2.35: the loaded object that holds an address, which the
// exception unwinder asks to find the unwind tables of the code that
// threw. Found here the way unwinders did before: the program headers of
// every loaded object.
struct FindObject {
  uintptr_t pc;
  struct dl_find_object* out;
  bool found;
};

static int FindIn(struct dl_phdr_info* info, size_t, void* data) {
  FindObject* f = static_cast<FindObject*>(data);
  uintptr_t low = UINTPTR_MAX, high = 0;
  bool holds = false;
  void* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    if (p.p_type == PT_LOAD) {
      low = start < low ? start : low;
      high = start + p.p_memsz > high ? start + p.p_memsz : high;
      holds = holds || (f->pc >= start && f->pc < start + p.p_memsz);
    } else if (p.p_type == PT_GNU_EH_FRAME) {
      eh_frame = reinterpret_cast<void*>(start);
    }
  }
  if (!holds) return 0;
  f->out->dlfo_flags = 0;
  f->out->dlfo_map_start = reinterpret_cast<void*>(low);
  f->out->dlfo_map_end = reinterpret_cast<void*>(high);
  f->out->dlfo_link_map = nullptr;
  f->out->dlfo_eh_frame = eh_frame;
  f->found = true;
  return 1;
}

int __wrap__dl_find_object(void* pc, struct dl_find_object* out) {
  FindObject f{reinterpret_cast<uintptr_t>(pc), out, false};
  dl_iterate_phdr(FindIn, &f);
  return f.found ? 0 : -1;
}

}  // extern "C"
