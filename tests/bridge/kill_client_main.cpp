// Test helper for ClientDeath: connects to a platform, launches a kernel that never ends, says
// "launched" on stdout and waits to be killed.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/bridge/test_client.h"

int main(int argc, char** argv) {
  using gpuvp::test::RawClient;
  using gpuvp::device::Opcode;
  if (argc != 3) return 2;
  std::string error;
  auto client = RawClient::connect(argv[1], &error);
  if (client == nullptr || !client->open_channel(&error)) {
    std::printf("error %s\n", error.c_str());
    return 1;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string ptx = text.str();
  const uint64_t image = client->allocate(ptx.size());
  std::memcpy(client->at(image), ptx.data(), ptx.size());
  const auto module = client->execute(0, RawClient::command(Opcode::LoadModule, image, ptx.size()));
  const uint64_t name = client->put_text("spin");
  const auto function = client->execute(0, RawClient::command(Opcode::GetFunction, module.value0, name, 4));
  const auto buffer = client->execute(0, RawClient::command(Opcode::MemMap, 1 << 20));
  if (module.status != 0 || function.status != 0 || buffer.status != 0) {
    std::printf("error setting up\n");
    return 1;
  }
  struct {
    uint64_t p;
    int64_t iterations;
  } args{buffer.value0, int64_t{1} << 50};
  gpuvp::device::Command launch{};
  launch.opcode = static_cast<uint32_t>(Opcode::Launch);
  launch.body.launch.function = function.value0;
  launch.body.launch.grid[0] = launch.body.launch.grid[1] = launch.body.launch.grid[2] = 1;
  launch.body.launch.block[0] = 32;
  launch.body.launch.block[1] = launch.body.launch.block[2] = 1;
  launch.body.launch.args_address = client->allocate(sizeof args, 16);
  std::memcpy(client->at(launch.body.launch.args_address), &args, sizeof args);
  launch.body.launch.args_bytes = sizeof args;
  client->submit(1, launch);
  client->submit(0, RawClient::command(Opcode::HostWaiting));
  std::printf("launched %u\n", client->channel_index());
  std::fflush(stdout);
  for (;;) ::pause();
}
