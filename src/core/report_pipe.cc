#include "core/report_pipe.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace anvil {

Status ReportPipe::Attach(ProcessSpec& spec, const std::string& flag) {
  if (pipe2(ends_, O_CLOEXEC) != 0) return Status::Error(std::string("pipe: ") + strerror(errno));
  fcntl(ends_[0], F_SETFL, fcntl(ends_[0], F_GETFL) | O_NONBLOCK);
  PassAs(spec, flag, ends_[1]);
  thread_ = std::thread(&ReportPipe::Drain, this);
  return Status::Ok();
}

void ReportPipe::Take(const char* data, std::size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes_ + n > kMaxBytes) {
    overflowed_ = true;
    return;
  }
  bytes_ += n;
  partial_.append(data, n);
  for (std::size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
    lines_.push_back(partial_.substr(0, nl));
    partial_.erase(0, nl + 1);
  }
}

void ReportPipe::Drain() {
  char buf[65536];
  for (bool last = false;;) {
    // After the child's end the pipe holds all it will: one more pass empties it (other holders of the write end,
    // a zygote, may keep it open, so no end of file is waited for).
    last = stop_.load();
    pollfd p = {ends_[0], POLLIN, 0};
    if (!last && poll(&p, 1, 50) <= 0) continue;
    for (;;) {
      const ssize_t n = read(ends_[0], buf, sizeof buf);
      if (n > 0) {
        Take(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      break;  // Empty for now (EAGAIN), or every writer gone (0).
    }
    if (last) return;
  }
}

void ReportPipe::Finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (int& fd : ends_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

std::vector<std::string> ReportPipe::Lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

}  // namespace anvil
