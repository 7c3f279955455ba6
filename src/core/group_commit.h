#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/mutex.h"

// Group commit: callers on many threads each hand in one item; items that
// arrive while a batch is on its way to disk wait, then go together in the
// next one, so N concurrent callers cost one transaction, not N. Each
// caller returns only once its own item is written, with its own answer.
// The first caller to find no batch under way writes for everyone queued
// so far; there is no thread of its own. Thread-safe.
namespace gleaner::core {

template <typename Item, typename Answer>
class GroupCommit {
 public:
  // Writes a batch: one answer per item, in order. It may move from the
  // items. Called with no lock held, one batch at a time.
  using Write = std::function<std::vector<Answer>(std::vector<Item*>& batch)>;
  // The answer of every item in a batch whose write threw: the next batch
  // can proceed (a batch left "under way" would stall every later caller).
  using Failed = std::function<Answer(const std::exception& e)>;

  GroupCommit(Write write, Failed failed) : write_(std::move(write)), failed_(std::move(failed)) {}

  Answer Submit(Item item) GLEANER_EXCLUDES(mu_) {
    Waiter me{std::move(item), std::nullopt};
    MutexLock lock(mu_);
    queued_.push_back(&me);
    while (!me.answer) {
      if (writing_) {
        mu_.Await(written_);
        continue;
      }
      std::vector<Waiter*> batch = std::exchange(queued_, {});
      writing_ = true;
      lock.Unlock();
      std::vector<Item*> items;
      for (Waiter* w : batch) items.push_back(&w->item);
      std::vector<Answer> answers;
      try {
        answers = write_(items);
        if (answers.size() != batch.size()) {
          throw std::logic_error("a batch of " + std::to_string(batch.size()) + " got " +
                                 std::to_string(answers.size()) + " answers");
        }
      } catch (const std::exception& e) {
        answers.assign(batch.size(), failed_(e));
      }
      lock.Lock();
      writing_ = false;
      for (size_t i = 0; i < batch.size(); ++i) batch[i]->answer = std::move(answers[i]);
      written_.notify_all();
    }
    return std::move(*me.answer);
  }

 private:
  struct Waiter {
    Item item;
    std::optional<Answer> answer;
  };

  const Write write_;
  const Failed failed_;
  Mutex mu_;
  std::condition_variable written_;
  std::vector<Waiter*> queued_ GLEANER_GUARDED_BY(mu_);  // waiting for the next batch
  bool writing_ GLEANER_GUARDED_BY(mu_) = false;         // a batch is being written
};

}  // namespace gleaner::core
