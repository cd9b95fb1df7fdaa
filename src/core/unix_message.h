// Messages on a SOCK_SEQPACKET socket pair between anvil and a process of its
// own (the zygote, the task server): one datagram per message, with the
// descriptors it names attached (SCM_RIGHTS).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace anvil {

inline constexpr std::size_t kMaxUnixMessage = 1 << 20;

// Sends `message` with `fds` (which the caller still owns). False on failure.
bool SendUnixMessage(int sock, const std::string& message, const std::vector<int>& fds = {});

// The next message; "" at end of file or on error. Descriptors that come with
// it are closed.
std::string ReceiveUnixMessage(int sock);

}  // namespace anvil
