// The ivshmem server side of QEMU's ivshmem client-server protocol (docs/specs/ivshmem-spec.rst),
// with the platform itself as peer device::kPlatformPeerId.
//
// A UNIX socket in a private directory (mkdtemp, 0700; socket 0600). On connect the new client
// gets, one 8-byte little-endian message each: the protocol version (0); its peer id; -1 with the
// shared-memory fd (SCM_RIGHTS); for every other peer (the platform first), its id once per vector
// with that vector's eventfd; then every other client learns of the new peer the same way; last
// the new peer's own id once per vector with its own eventfds (to receive on). When a client's
// socket closes, every other client gets its id without an fd.
//
// The server runs its own I/O thread (epoll on the socket, the clients' sockets, the platform's
// eventfds, a period timer and a stop eventfd) and reports to a Listener on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpuvp::bridge {

class IvshmemServer {
 public:
  // Called on the server's I/O thread, never concurrently.
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void peer_joined(int64_t peer) = 0;  // before the client has received anything
    virtual void peer_left(int64_t peer) = 0;    // its socket closed; its eventfds are gone
    virtual void doorbell(uint32_t vector) = 0;  // a peer rang one of the platform's vectors
    virtual void tick() = 0;                     // every `period`
    virtual void stop_asked() = 0;               // request_stop() was called
  };

  // Creates the private directory and the listening socket; the I/O thread starts with start().
  // `parent_dir` empty or "auto": $TMPDIR, else /tmp. Throws std::system_error.
  IvshmemServer(const std::string& parent_dir, int shm_fd, uint32_t vectors, std::chrono::milliseconds period,
                Listener& listener);
  ~IvshmemServer();  // stops the thread, closes every peer, removes the socket and its directory
  IvshmemServer(const IvshmemServer&) = delete;
  IvshmemServer& operator=(const IvshmemServer&) = delete;

  void start();
  const std::string& socket_path() const { return socket_path_; }

  // Rings `vector` of client `peer` (writes 1 to its eventfd). False when the peer is gone.
  // Thread-safe.
  bool ring(int64_t peer, uint32_t vector);
  bool connected(int64_t peer) const;  // thread-safe
  size_t client_count() const;         // thread-safe
  // Wakes the I/O thread, which calls Listener::stop_asked(). Async-signal-safe.
  void request_stop();

 private:
  struct Vectors;  // a peer's eventfds, closed when the last user lets go
  struct Client {
    int socket = -1;
    std::shared_ptr<Vectors> vectors;
  };

  void run();
  void accept_client();
  void drop_client(int64_t peer);
  int64_t next_peer_id();
  bool send_message(int socket, int64_t value, int fd);

  std::string directory_;
  std::string socket_path_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;
  int timer_fd_ = -1;
  int shm_fd_;
  uint32_t vectors_;
  std::chrono::milliseconds period_;
  Listener& listener_;
  std::shared_ptr<Vectors> own_;  // the platform's eventfds (peer 0)
  mutable std::mutex mutex_;      // guards clients_
  std::map<int64_t, Client> clients_;
  int64_t last_peer_id_ = 0;
  std::atomic<bool> shutdown_{false};
  std::thread thread_;
};

}  // namespace gpuvp::bridge
