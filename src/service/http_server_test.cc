#include "service/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace anvil {
namespace {

using namespace std::chrono_literals;

// A raw client: sends bytes as given, reads what comes back.
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }
  void Send(const std::string& data) { (void)!send(fd_, data.data(), data.size(), MSG_NOSIGNAL); }
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }
  // Reads until `want` appears, the peer closes, or `timeout`.
  std::string ReadUntil(const std::string& want, std::chrono::milliseconds timeout = 5000ms) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (got_.find(want) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      got_.append(buf, static_cast<std::size_t>(n));
    }
    return got_;
  }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string got_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions o = {}) {
    o.error_body = [](int status, const std::string& message) {
      return "{\"status\":" + std::to_string(status) + ",\"message\":\"" + message + "\"}";
    };
    server_ = std::make_unique<HttpServer>(o);
    server_->Route("GET", "/hello", [](const HttpRequest& req, HttpResponse& res) {
      res.body = "hello " + req.param("name");
      res.content_type = "text/plain";
    });
    server_->Route("GET", "/jobs/{id}",
                   [](const HttpRequest& req, HttpResponse& res) { res.body = "job " + req.path_params.at(0); });
    server_->Route("POST", "/echo", [](const HttpRequest& req, HttpResponse& res) {
      res.status = 201;
      res.body = req.body;
      res.set_header("X-Length", std::to_string(req.body.size()));
    });
    server_->Route("GET", "/slow", [this](const HttpRequest&, HttpResponse& res) {
      slow_started_ = true;
      std::this_thread::sleep_for(300ms);
      res.body = "slow done";
    });
    server_->Route("GET", "/throw", [](const HttpRequest&, HttpResponse&) { throw std::runtime_error("boom"); });
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok()) << port.message();
    port_ = port.value();
    thread_ = std::thread([this] { server_->Serve(); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> slow_started_{false};  // The /slow handler is running.
};

TEST_F(HttpServerTest, RoutesParamsAndErrors) {
  Start();
  Client c(port_);
  c.Send("GET /hello?name=a%20b&x HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string got = c.ReadUntil("hello a b");
  EXPECT_NE(got.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("Content-Length: 9\r\n"), std::string::npos) << got;
  Client j(port_);
  j.Send("GET /jobs/j_12-ab HTTP/1.1\r\n\r\n");
  EXPECT_NE(j.ReadUntil("job j_12-ab").find("job j_12-ab"), std::string::npos);
  Client missing(port_);
  missing.Send("GET /nothing HTTP/1.1\r\n\r\n");
  got = missing.ReadUntil("}");
  EXPECT_NE(got.find("404 Not Found"), std::string::npos) << got;
  EXPECT_NE(got.find("no route GET /nothing"), std::string::npos) << got;
  Client wrong(port_);
  wrong.Send("DELETE /hello HTTP/1.1\r\n\r\n");
  got = wrong.ReadUntil("}");
  EXPECT_NE(got.find("405"), std::string::npos) << got;
  EXPECT_NE(got.find("Allow: GET"), std::string::npos) << got;
  Client thrower(port_);
  thrower.Send("GET /throw HTTP/1.1\r\n\r\n");
  got = thrower.ReadUntil("}");
  EXPECT_NE(got.find("500"), std::string::npos) << got;
  EXPECT_NE(got.find("boom"), std::string::npos) << got;
  Client garbage(port_);
  garbage.Send("NONSENSE\r\n\r\n");
  EXPECT_NE(garbage.ReadUntil("}").find("400"), std::string::npos);
}

TEST_F(HttpServerTest, KeepAlivePipeliningAndHalfClose) {
  Start();
  Client c(port_);
  c.Send("POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /hello?name=z HTTP/1.1\r\n\r\n");
  std::string got = c.ReadUntil("hello z");
  EXPECT_NE(got.find("201 Created"), std::string::npos) << got;
  EXPECT_NE(got.find("\r\n\r\nabc"), std::string::npos) << got;
  EXPECT_NE(got.find("hello z"), std::string::npos) << got;
  EXPECT_FALSE(c.closed());
  // HTTP/1.0 closes after its answer; a client that closes its side after
  // the request still gets the answer.
  Client old(port_);
  old.Send("GET /hello?name=o HTTP/1.0\r\n\r\n");
  got = old.ReadUntil("never", 2000ms);
  EXPECT_NE(got.find("Connection: close"), std::string::npos) << got;
  EXPECT_TRUE(old.closed());
  Client half(port_);
  half.Send("GET /hello?name=h HTTP/1.1\r\n\r\n");
  half.ShutdownWrite();
  EXPECT_NE(half.ReadUntil("hello h").find("hello h"), std::string::npos);
}

TEST_F(HttpServerTest, ExpectContinueAndBodyLimits) {
  HttpServerOptions o;
  o.max_body_bytes = 1000;
  o.max_header_bytes = 512;
  Start(o);
  Client c(port_);
  c.Send("POST /echo HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_NE(c.ReadUntil("100 Continue\r\n\r\n").find("HTTP/1.1 100 Continue"), std::string::npos);
  c.Send("12345");
  EXPECT_NE(c.ReadUntil("12345").find("X-Length: 5"), std::string::npos);
  // Over the limit: 413 is read by a client still sending its body.
  Client big(port_);
  big.Send("POST /echo HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + std::string(3000, 'x'));
  std::string got = big.ReadUntil("}");
  EXPECT_NE(got.find("413"), std::string::npos) << got;
  Client chunked(port_);
  chunked.Send("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  EXPECT_NE(chunked.ReadUntil("}").find("411"), std::string::npos);
  Client headers(port_);
  headers.Send("GET /hello HTTP/1.1\r\nX-Big: " + std::string(600, 'h') + "\r\n\r\n");
  EXPECT_NE(headers.ReadUntil("}").find("431"), std::string::npos);
}

TEST_F(HttpServerTest, ASlowClientGets408AndOthersAreServedMeanwhile) {
  HttpServerOptions o;
  o.request_deadline = 600ms;
  Start(o);
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<Client>(port_));
    slow.back()->Send("GET /hel");
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      for (auto& c : slow) c->Send("l");  // A byte now and then: each read is quick, the request never whole.
      std::this_thread::sleep_for(50ms);
    }
  });
  for (int i = 0; i < 5; ++i) {
    Client quick(port_);
    quick.Send("GET /hello?name=q HTTP/1.1\r\n\r\n");
    EXPECT_NE(quick.ReadUntil("hello q", 500ms).find("hello q"), std::string::npos);
  }
  std::string got = slow.front()->ReadUntil("}", 3000ms);
  stop = true;
  trickle.join();
  EXPECT_NE(got.find("408 Request Timeout"), std::string::npos) << got;
  EXPECT_NE(got.find("did not arrive whole"), std::string::npos) << got;
}

TEST_F(HttpServerTest, ConnectionsPastTheLimitGet503) {
  HttpServerOptions o;
  o.max_connections = 2;
  Start(o);
  Client a(port_), b(port_);
  a.Send("GET /hel");  // Both held open, neither whole.
  b.Send("GET /hel");
  std::this_thread::sleep_for(100ms);
  Client c(port_);
  EXPECT_NE(c.ReadUntil("}").find("503"), std::string::npos);
}

TEST_F(HttpServerTest, StopAnswersTheRequestsInFlight) {
  Start();
  Client c(port_);
  c.Send("GET /slow HTTP/1.1\r\n\r\n");
  // In flight: its handler runs (a fixed sleep here lost the race on a loaded machine, and the request was never
  // read).
  for (int i = 0; i < 500 && !slow_started_; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(slow_started_);
  server_->Stop();
  EXPECT_NE(c.ReadUntil("slow done").find("slow done"), std::string::npos);
  thread_.join();  // Serve returned.
  Client after(port_);
  EXPECT_FALSE(after.connected());
}

TEST(PercentDecodeTest, DecodesEscapesAndKeepsMalformedOnes) {
  EXPECT_EQ(PercentDecode("a%2Cb%20c"), "a,b c");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz"), "%zz");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
}

}  // namespace
}  // namespace anvil
