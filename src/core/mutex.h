#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

// A mutex whose rules the compiler checks. Fields it guards are marked
// GLEANER_GUARDED_BY(mu_), functions that expect it held
// GLEANER_REQUIRES(mu_); clang's -Wthread-safety then refuses code that
// touches them without the lock (the ctest ThreadSafetyAnalysis compiles
// the modules that use it so). Other compilers see plain std::mutex.
#if defined(__clang__)
#define GLEANER_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define GLEANER_THREAD_ANNOTATION(x)
#endif

#define GLEANER_CAPABILITY(name) GLEANER_THREAD_ANNOTATION(capability(name))
#define GLEANER_SCOPED_CAPABILITY GLEANER_THREAD_ANNOTATION(scoped_lockable)
#define GLEANER_GUARDED_BY(mu) GLEANER_THREAD_ANNOTATION(guarded_by(mu))
#define GLEANER_PT_GUARDED_BY(mu) GLEANER_THREAD_ANNOTATION(pt_guarded_by(mu))
#define GLEANER_REQUIRES(...) GLEANER_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define GLEANER_EXCLUDES(...) GLEANER_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define GLEANER_ACQUIRE(...) GLEANER_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define GLEANER_RELEASE(...) GLEANER_THREAD_ANNOTATION(release_capability(__VA_ARGS__))

namespace gleaner::core {

class GLEANER_CAPABILITY("mutex") Mutex {
 public:
  void lock() GLEANER_ACQUIRE() { mu_.lock(); }
  void unlock() GLEANER_RELEASE() { mu_.unlock(); }
  // Tells the analysis the mutex is held where it cannot see so: in a
  // callback that runs only under the lock (a lambda the holder passes on).
  void AssertHeld() const GLEANER_THREAD_ANNOTATION(assert_capability(this)) {}

  // Waits for `cv` while holding this mutex: released while waiting, held
  // again on return (a spurious wake included: the caller checks its
  // condition in a loop).
  void Await(std::condition_variable& cv) GLEANER_REQUIRES(this) {
    std::unique_lock lock(mu_, std::adopt_lock);
    cv.wait(lock);
    lock.release();
  }
  // Waits for `cv` once, until a wake (spurious ones included) or
  // `deadline`; held on return.
  template <typename Clock, typename Duration>
  void AwaitUntil(std::condition_variable& cv,
                  const std::chrono::time_point<Clock, Duration>& deadline) GLEANER_REQUIRES(this) {
    std::unique_lock lock(mu_, std::adopt_lock);
    cv.wait_until(lock, deadline);
    lock.release();
  }
  // Waits for `cv` until `done()` holds (checked under this mutex), or
  // until `deadline`; returns done()'s last answer. Held on return.
  template <typename Clock, typename Duration, typename Done>
  bool AwaitUntil(std::condition_variable& cv,
                  const std::chrono::time_point<Clock, Duration>& deadline, Done done)
      GLEANER_REQUIRES(this) {
    std::unique_lock lock(mu_, std::adopt_lock);
    const bool met = cv.wait_until(lock, deadline, std::move(done));
    lock.release();
    return met;
  }
  template <typename Rep, typename Period, typename Done>
  bool AwaitFor(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& timeout,
                Done done) GLEANER_REQUIRES(this) {
    return AwaitUntil(cv, std::chrono::steady_clock::now() + timeout, std::move(done));
  }
  // Waits for `cv` until `done()` holds; held on return.
  template <typename Done>
  void Await(std::condition_variable& cv, Done done) GLEANER_REQUIRES(this) {
    std::unique_lock lock(mu_, std::adopt_lock);
    cv.wait(lock, std::move(done));
    lock.release();
  }

 private:
  std::mutex mu_;
};

// Holds `mu` from construction to destruction, or until Unlock: a function
// that calls out (to a waiter, to the store) after its work under the lock
// unlocks first.
class GLEANER_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) GLEANER_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() GLEANER_RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() GLEANER_RELEASE() {
    held_ = false;
    mu_.unlock();
  }
  void Lock() GLEANER_ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

}  // namespace gleaner::core
