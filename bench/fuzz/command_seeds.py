#!/usr/bin/env python3
"""Writes the seed corpus of the command fuzzer (bench/fuzz/corpus/command/): short client
sessions in the fuzzer's input format (bench/fuzz/command_fuzz.cpp says what each byte means).

Usage: bench/fuzz/command_seeds.py [OUT_DIR]
"""
import os
import struct
import sys

# Opcodes of sw/include/gpuvp/device.h used by the seeds.
NOP, MEM_MAP, MEM_UNMAP, MEMCPY, MEMSET, LOAD_MODULE, UNLOAD_MODULE, GET_FUNCTION = range(8)
HOST_WAITING = 13
OPCODE_COUNT = 27  # Opcode::IpcEventWait + 1; the fuzzer adds two unknown opcodes

PTX = b""".version 7.0
.target sm_75
.address_size 64
.visible .entry fill(.param .u64 out, .param .u32 value)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [value];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def command(opcode, sequence, a=0, b=0, c=0, d=0, flags=0):
    return struct.pack("<IIQQQQQ", opcode, flags, sequence, a, b, c, d) + bytes(112 - 32)


def queued(queue, body):  # action 0
    return bytes([queue << 3 | 0]) + body


def window_command(queue, mask, body):  # action 1
    return bytes([queue << 3 | 1, mask]) + body


def window_bytes(offset16, data):  # action 4
    return bytes([4]) + struct.pack("<HH", offset16, len(data)) + data


HOST_WAIT = bytes([5])
DOORBELL = bytes([7])


def seeds():
    yield "nop", queued(0, command(NOP, 1)) + HOST_WAIT
    yield "map_copy_set_unmap", (
        queued(0, command(MEM_MAP, 1, 4096)) + HOST_WAIT +
        window_bytes(0, bytes(range(256))) +
        window_command(0, 0b0010, command(MEMCPY, 2, 0x7000_0000_0000, 0, 256, 1)) +
        queued(1, command(MEMSET, 3, 0x7000_0000_0000, 4096, 0x5a)) +
        queued(0, command(MEM_UNMAP, 4, 0x7000_0000_0000)) + HOST_WAIT)
    name = b"fill"
    yield "module_function", (
        window_bytes(0, PTX) + window_bytes(256, name + b"\0") +
        window_command(0, 0b0001, command(LOAD_MODULE, 1, 0, len(PTX))) + HOST_WAIT +
        window_command(0, 0b1010, command(GET_FUNCTION, 2, 1, 256 * 16, len(name), 512 * 16)) +
        queued(0, command(UNLOAD_MODULE, 3, 1)) + HOST_WAIT)
    yield "malformed_module", (
        window_bytes(0, PTX[:120] + b"}}}") +
        window_command(0, 0b0001, command(LOAD_MODULE, 1, 0, 123)) + HOST_WAIT)
    yield "every_opcode", b"".join(
        queued(op % 8, command(op, op + 1, 16, 16, 16, 16)) for op in range(OPCODE_COUNT + 2)) + HOST_WAIT
    yield "corrupt_tail", queued(0, command(NOP, 1)) + bytes([2]) + struct.pack("<I", 0xffff_fff0) + DOORBELL
    yield "completion_head_ahead", bytes([3]) + struct.pack("<I", 5000) + queued(0, command(NOP, 1)) + HOST_WAIT
    # The platform looked at a hundred entries, then the tail moves back to the first (a walk of
    # 2^32 entries once stalled the platform: bench/fuzz/regressions/command/ keeps this one).
    yield "tail_moved_backwards", (
        b"".join(queued(1, command(NOP, 100 + i)) for i in range(100)) + DOORBELL + bytes([6]) * 50 +
        bytes([1 << 3 | 2]) + struct.pack("<I", 1) + DOORBELL + queued(0, command(NOP, 1)) + HOST_WAIT)
    yield "wrapping_lengths", (
        window_command(0, 0b0010, command(MEMCPY, 1, 0x7000_0000_0000, 0, 0xffff_ffff_ffff_f000, 1)) +
        window_command(2, 0b0001, command(LOAD_MODULE, 2, 0, 0xffff_ffff_ffff_ffff)) + HOST_WAIT)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "command")
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
