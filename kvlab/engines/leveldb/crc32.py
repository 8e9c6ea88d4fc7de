"""Which CRC32C LevelDB's library computes with: it shows in what the library links."""
import subprocess


def crc32_of_library(path: str) -> str:
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return ("crc32c library (SSE4.2 when the CPU has it)" if "libcrc32c" in out
            else "LevelDB's portable CRC32C (no hardware acceleration linked)")
