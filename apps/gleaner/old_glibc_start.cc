// A program's start on glibcs before 2.34 (apps/gleaner/old_glibc.cc says
// why the release gleaner needs it; libraries do without). Programs linked
// since 2.34 leave running their constructors to __libc_start_main; older
// ones pass a function that runs them, which is what older glibcs call
// (and newer ones still do for such programs). The destructors run from
// the dynamic linker in both.
#include <cstddef>

extern "C" {

extern void (*__init_array_start[])(int, char**, char**) __attribute__((visibility("hidden")));
extern void (*__init_array_end[])(int, char**, char**) __attribute__((visibility("hidden")));
void _init(void);

static void RunConstructors(int argc, char** argv, char** envp) {
  _init();
  const size_t n = static_cast<size_t>(__init_array_end - __init_array_start);
  for (size_t i = 0; i < n; ++i) (*__init_array_start[i])(argc, argv, envp);
}

int old___libc_start_main(int (*main)(int, char**, char**), int argc, char** argv,
                          void (*init)(int, char**, char**), void (*fini)(void),
                          void (*rtld_fini)(void), void* stack_end);
__asm__(".symver old___libc_start_main,__libc_start_main@GLIBC_2.2.5");
int __wrap___libc_start_main(int (*main)(int, char**, char**), int argc, char** argv,
                             void (*)(int, char**, char**), void (*)(void), void (*rtld_fini)(void),
                             void* stack_end) {
  return old___libc_start_main(main, argc, argv, RunConstructors, nullptr, rtld_fini, stack_end);
}

}  // extern "C"
