#include "service/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace anvil {
namespace {

using Clock = std::chrono::steady_clock;

const char* Reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
  }
  return "Status";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < path.size()) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    if (slash > at) out.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return out;
}

bool IsIdSegment(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

// One connection: what it sent that no request has taken yet, and until when
// it may take to send the rest.
struct Conn {
  int fd = -1;
  std::string in;
  Clock::time_point deadline;
  bool started = false;  // A request's first byte has come: its whole-request deadline runs.
  bool sent_continue = false;
  // Refused: what it still sends is read and dropped until it closes or the
  // deadline, so that a client still sending its body reads the answer
  // rather than a broken pipe.
  bool draining = false;
};

// Writes all of `data` within `deadline`; false on an error or timeout.
bool WriteAll(int fd, const std::string& data, Clock::time_point deadline) {
  std::size_t at = 0;
  while (at < data.size()) {
    const ssize_t n = send(fd, data.data() + at, data.size() - at, MSG_NOSIGNAL);
    if (n > 0) {
      at += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, static_cast<int>(left)) < 0 && errno != EINTR) return false;
      continue;
    }
    return false;
  }
  return true;
}

std::string Serialize(const HttpResponse& res, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(res.status) + " " + Reason(res.status) + "\r\n";
  if (!res.content_type.empty()) out += "Content-Type: " + res.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  for (const auto& [name, value] : res.headers) out += name + ": " + value + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return out + res.body;
}

}  // namespace

std::string HttpRequest::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? "" : it->second;
}

std::string PercentDecode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

struct HttpServer::Impl {
  HttpServerOptions o;
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    HttpHandler handler;
  };
  std::vector<Route> routes;
  int listen_fd = -1;
  int wake[2] = {-1, -1};
  std::atomic<bool> stopping{false};
  std::atomic<int> open{0};

  struct Work {
    std::unique_ptr<Conn> conn;
    HttpRequest request;
    bool keep_alive = false;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Work> work;
  std::vector<std::unique_ptr<Conn>> returned;  // Keep-alive connections back from workers.
  bool done = false;                            // No more work will come.

  explicit Impl(HttpServerOptions options) : o(std::move(options)) {}

  void Wake() {
    const char c = 1;
    (void)!write(wake[1], &c, 1);
  }

  std::string ErrorBody(int status, const std::string& message) const {
    return o.error_body ? o.error_body(status, message) : message;
  }

  // Answers an error of the server's own; the connection is then drained
  // for a moment (Conn::draining) and closed.
  void Refuse(Conn& conn, int status, const std::string& message) {
    HttpResponse res;
    res.status = status;
    res.body = ErrorBody(status, message);
    (void)WriteAll(conn.fd, Serialize(res, false), Clock::now() + std::chrono::milliseconds(200));
    shutdown(conn.fd, SHUT_WR);
    conn.in.clear();
    conn.draining = true;
    conn.deadline = Clock::now() + std::chrono::seconds(2);
  }

  void Close(std::unique_ptr<Conn> conn) {
    ::close(conn->fd);
    --open;
  }

  enum class Parse { kIncomplete, kComplete, kRefused };
  // Takes a whole request off the front of conn.in, or answers an error.
  Parse TryParse(Conn& conn, Work& w, int& status, std::string& message) {
    const std::size_t end = conn.in.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (conn.in.size() > o.max_header_bytes) {
        status = 431;
        message = "the request's headers are over " + std::to_string(o.max_header_bytes) + " bytes";
        return Parse::kRefused;
      }
      return Parse::kIncomplete;
    }
    if (end > o.max_header_bytes) {
      status = 431;
      message = "the request's headers are over " + std::to_string(o.max_header_bytes) + " bytes";
      return Parse::kRefused;
    }
    HttpRequest req;
    std::size_t line_end = conn.in.find("\r\n");
    const std::string line = conn.in.substr(0, line_end);
    const std::size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string::npos || sp2 == sp1) {
      status = 400;
      message = "malformed request line";
      return Parse::kRefused;
    }
    req.method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string version = line.substr(sp2 + 1);
    if (version != "HTTP/1.1" && version != "HTTP/1.0") {
      status = version.rfind("HTTP/", 0) == 0 ? 505 : 400;
      message = "HTTP/1.1 or HTTP/1.0 only";
      return Parse::kRefused;
    }
    for (std::size_t at = line_end + 2; at < end;) {
      std::size_t next = conn.in.find("\r\n", at);
      if (next == std::string::npos || next > end) next = end;
      const std::string h = conn.in.substr(at, next - at);
      at = next + 2;
      const std::size_t colon = h.find(':');
      if (h.empty() || h[0] == ' ' || h[0] == '\t' || colon == std::string::npos || colon == 0) {
        status = 400;
        message = "malformed header line";
        return Parse::kRefused;
      }
      req.headers[Lower(Trim(h.substr(0, colon)))] = Trim(h.substr(colon + 1));
    }
    if (req.has_header("transfer-encoding")) {
      status = 411;
      message = "send the body with Content-Length (no Transfer-Encoding)";
      return Parse::kRefused;
    }
    std::size_t length = 0;
    if (req.has_header("content-length")) {
      const std::string text = req.header("content-length");
      if (text.empty() || text.size() > 12 || !std::all_of(text.begin(), text.end(), ::isdigit)) {
        status = 400;
        message = "malformed Content-Length";
        return Parse::kRefused;
      }
      length = std::stoull(text);
      if (length > o.max_body_bytes) {
        status = 413;
        message = "the body is over the service's limit of " + std::to_string(o.max_body_bytes >> 20) + " MiB";
        return Parse::kRefused;
      }
    }
    if (conn.in.size() < end + 4 + length) {
      if (!conn.sent_continue && Lower(req.header("expect")) == "100-continue") {
        conn.sent_continue = true;
        (void)WriteAll(conn.fd, "HTTP/1.1 100 Continue\r\n\r\n", Clock::now() + std::chrono::milliseconds(200));
      }
      return Parse::kIncomplete;
    }
    req.body = conn.in.substr(end + 4, length);
    conn.in.erase(0, end + 4 + length);
    conn.sent_continue = false;
    // Origin-form, or absolute-form (a proxy's): the path and query.
    if (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0) {
      const std::size_t slash = target.find('/', target.find("//") + 2);
      target = slash == std::string::npos ? "/" : target.substr(slash);
    }
    const std::size_t q = target.find('?');
    req.path = PercentDecode(target.substr(0, q));
    if (q != std::string::npos) {
      const std::string query = target.substr(q + 1);
      for (std::size_t at = 0; at <= query.size();) {
        std::size_t amp = query.find('&', at);
        if (amp == std::string::npos) amp = query.size();
        const std::string pair = query.substr(at, amp - at);
        at = amp + 1;
        if (pair.empty()) continue;
        const std::size_t eq = pair.find('=');
        req.params[PercentDecode(pair.substr(0, eq))] =
            eq == std::string::npos ? "" : PercentDecode(pair.substr(eq + 1));
      }
    }
    const std::string connection = Lower(req.header("connection"));
    w.keep_alive = version == "HTTP/1.1" ? connection != "close" : connection == "keep-alive";
    w.request = std::move(req);
    return Parse::kComplete;
  }

  // After new bytes: hands a whole request to the workers (true: the
  // connection left the reader), or refuses it.
  bool Advance(std::unique_ptr<Conn>& conn) {
    if (conn->in.empty() || conn->draining) return false;
    if (!conn->started) {
      conn->started = true;
      conn->deadline = Clock::now() + o.request_deadline;
    }
    Work w;
    int status = 0;
    std::string message;
    switch (TryParse(*conn, w, status, message)) {
      case Parse::kIncomplete:
        return false;
      case Parse::kRefused:
        Refuse(*conn, status, message);
        return false;
      case Parse::kComplete:
        break;
    }
    w.conn = std::move(conn);
    {
      std::lock_guard<std::mutex> lock(mu);
      work.push_back(std::move(w));
    }
    cv.notify_one();
    return true;
  }

  void Dispatch(const HttpRequest& in, HttpResponse& res) {
    HttpRequest req = in;
    const std::vector<std::string> segments = Segments(req.path);
    std::string allowed;
    for (const Route& r : routes) {
      if (r.segments.size() != segments.size()) continue;
      std::vector<std::string> matched;
      bool ok = true;
      for (std::size_t i = 0; i < segments.size() && ok; ++i) {
        if (r.segments[i].size() > 2 && r.segments[i].front() == '{') {
          ok = IsIdSegment(segments[i]);
          matched.push_back(segments[i]);
        } else {
          ok = r.segments[i] == segments[i];
        }
      }
      if (!ok) continue;
      if (r.method != req.method) {
        allowed += (allowed.empty() ? "" : ", ") + r.method;
        continue;
      }
      req.path_params = std::move(matched);
      try {
        r.handler(req, res);
      } catch (const std::exception& e) {
        res = HttpResponse();
        res.status = 500;
        res.body = ErrorBody(500, std::string("anvil failed on this request (") + e.what() + "): the service goes on");
      } catch (...) {
        res = HttpResponse();
        res.status = 500;
        res.body = ErrorBody(500, "anvil failed on this request: the service goes on");
      }
      return;
    }
    if (!allowed.empty()) {
      res.status = 405;
      res.set_header("Allow", allowed);
      res.body = ErrorBody(405, req.method + " " + req.path + " is not served; it takes " + allowed);
    } else {
      res.status = 404;
      res.body = ErrorBody(404, "no route " + req.method + " " + req.path + " (see docs/service.md)");
    }
  }

  void Worker() {
    while (true) {
      Work w;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return done || !work.empty(); });
        if (work.empty()) return;
        w = std::move(work.front());
        work.pop_front();
      }
      HttpResponse res;
      Dispatch(w.request, res);
      const bool keep = w.keep_alive && !stopping;
      const bool written = WriteAll(w.conn->fd, Serialize(res, keep), Clock::now() + o.write_timeout);
      if (keep && written) {
        w.conn->started = false;
        w.conn->deadline = Clock::now() + o.idle_timeout;
        {
          std::lock_guard<std::mutex> lock(mu);
          returned.push_back(std::move(w.conn));
        }
        Wake();
      } else {
        Close(std::move(w.conn));
      }
    }
  }

  void Serve() {
    std::vector<std::thread> workers;
    for (int i = 0; i < std::max(o.max_connections, 1); ++i) workers.emplace_back(&Impl::Worker, this);
    std::map<int, std::unique_ptr<Conn>> reading;
    while (!stopping) {
      {
        std::vector<std::unique_ptr<Conn>> back;
        {
          std::lock_guard<std::mutex> lock(mu);
          back.swap(returned);
        }
        for (auto& c : back) {
          // A pipelined request may be there already.
          if (!Advance(c)) reading[c->fd] = std::move(c);
        }
      }
      std::vector<pollfd> fds;
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listen_fd, POLLIN, 0});
      auto next = Clock::now() + std::chrono::seconds(1);
      for (auto& [fd, c] : reading) {
        fds.push_back({fd, POLLIN, 0});
        next = std::min(next, c->deadline);
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      if (poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait, 0) + 1)) < 0 && errno != EINTR) {
        break;
      }
      if (fds[0].revents & POLLIN) {
        char buf[256];
        while (read(wake[0], buf, sizeof buf) > 0) {
        }
      }
      if (fds[1].revents & POLLIN) {
        while (true) {
          const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (fd < 0) break;
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto c = std::make_unique<Conn>();
          c->fd = fd;
          c->deadline = Clock::now() + o.idle_timeout;
          if (++open > o.max_connections) {
            HttpResponse res;
            res.status = 503;
            res.body = ErrorBody(
                503, "the service has " + std::to_string(o.max_connections) + " connections open, its limit: retry");
            (void)WriteAll(fd, Serialize(res, false), Clock::now() + std::chrono::milliseconds(100));
            Close(std::move(c));
            continue;
          }
          reading[fd] = std::move(c);
        }
      }
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        auto it = reading.find(fds[i].fd);
        if (it == reading.end()) continue;
        std::unique_ptr<Conn>& c = it->second;
        char buf[65536];
        bool closed = false;
        while (true) {
          const ssize_t n = recv(c->fd, buf, sizeof buf, 0);
          if (n > 0) {
            if (c->draining) continue;
            c->in.append(buf, static_cast<std::size_t>(n));
            if (c->in.size() > o.max_header_bytes + o.max_body_bytes + 4) break;
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
          break;
        }
        // A client may send its request and close its side at once: the
        // request is still answered.
        if (Advance(c)) {
          reading.erase(it);
        } else if (closed) {
          Close(std::move(c));
          reading.erase(it);
        }
      }
      const auto now = Clock::now();
      for (auto it = reading.begin(); it != reading.end();) {
        if (now < it->second->deadline) {
          ++it;
          continue;
        }
        if (it->second->started && !it->second->draining) {
          Refuse(*it->second, 408,
                 "the request did not arrive whole within " + std::to_string(o.request_deadline.count() / 1000) + " s");
          ++it;
          continue;
        }
        Close(std::move(it->second));
        it = reading.erase(it);
      }
    }
    ::close(listen_fd);
    listen_fd = -1;
    for (auto& [fd, c] : reading) Close(std::move(c));
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_all();
    for (auto& t : workers) t.join();
    for (auto& c : returned) Close(std::move(c));
    returned.clear();
  }
};

HttpServer::HttpServer(HttpServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  if (pipe2(impl_->wake, O_NONBLOCK | O_CLOEXEC) != 0) impl_->wake[0] = impl_->wake[1] = -1;
}

HttpServer::~HttpServer() {
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
  for (int fd : impl_->wake) {
    if (fd >= 0) ::close(fd);
  }
}

void HttpServer::Route(const std::string& method, const std::string& pattern, HttpHandler handler) {
  impl_->routes.push_back({method, Segments(pattern), std::move(handler)});
}

Result<int> HttpServer::Bind() {
  const HttpServerOptions& o = impl_->o;
  if (impl_->wake[0] < 0) return Status::Error(std::string("cannot make a pipe: ") + std::strerror(errno));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string host = o.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = std::to_string(o.port);
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Status::Error("cannot listen on " + o.host + ": " + gai_strerror(rc));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // Not SO_REUSEPORT: a second server on the same port would take half of
    // the first one's connections. SO_REUSEADDR only lets a restarted server
    // bind while the old one's connections linger.
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
      impl_->listen_fd = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  if (impl_->listen_fd < 0) {
    return Status::Error("cannot listen on " + o.host + ":" + port + " (" + why +
                         (o.port != 0 ? "; another --port, or 0 for any free one)" : ")"));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void HttpServer::Serve() { impl_->Serve(); }

void HttpServer::Stop() {
  impl_->stopping = true;
  impl_->Wake();
}

}  // namespace anvil
