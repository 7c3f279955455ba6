# gleaner_for_old_glibc(TARGET): TARGET, built here on Debian 12 (glibc
# 2.36), also loads on every glibc from 2.28 on (RHEL 8; Debian 11 and
# Ubuntu 20.04 have 2.31, Ubuntu 22.04 2.35). libstdc++ and libgcc are
# linked in; every reference to a glibc symbol newer than 2.28 goes to
# apps/gleaner/old_glibc.cc and, for a program's start,
# old_glibc_start.cc (which say how each is served); and the
# libraries that held the pthread and dl functions before 2.34 are named,
# so that an old glibc loads them. tests/static_binary_test.sh fails on a
# symbol this list misses.
function(gleaner_for_old_glibc target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/apps/gleaner/old_glibc.cc)
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  set_target_properties(${target} PROPERTIES GLEANER_STATIC_OPENSSL ON)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")  # a program's start; a library has none
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/apps/gleaner/old_glibc_start.cc)
    target_link_options(${target} PRIVATE "LINKER:--wrap=__libc_start_main")
  endif()
  foreach(symbol
      pthread_create pthread_detach pthread_join pthread_getspecific pthread_setspecific
      pthread_key_create __pthread_key_create pthread_key_delete pthread_once
      pthread_mutex_trylock pthread_mutexattr_init pthread_mutexattr_destroy
      pthread_mutexattr_settype pthread_rwlock_init pthread_rwlock_destroy pthread_rwlock_rdlock
      pthread_rwlock_wrlock pthread_rwlock_unlock pthread_cond_clockwait
      dlopen dlclose dlerror dlsym dladdr exp exp2 log pow
      stat lstat fstat stat64 lstat64 fstat64 __libc_single_threaded
      close_range arc4random _dl_find_object)
    target_link_options(${target} PRIVATE "LINKER:--wrap=${symbol}")
  endforeach()
  target_link_options(${target} PRIVATE "LINKER:--push-state,--no-as-needed"
                      "-l:libpthread.so.0" "-l:libdl.so.2" "LINKER:--pop-state")
endfunction()
