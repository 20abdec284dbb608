#!/usr/bin/env python3
"""Writes the seed bad-file corpus (Tests/AudioFilesTests/Corpus). Each input's first byte selects the
extension the fuzzer gives it (index into FileDecodeFuzzer's `extensions`); the rest is the file."""
import os, random, struct, sys

EXT = ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "m4a", "mp4", "aac", "w64", "raw", "xyz"]
out = sys.argv[1] if len(sys.argv) > 1 else "Tests/AudioFilesTests/Corpus"
os.makedirs(out, exist_ok=True)
rng = random.Random(20261122)

def wav(channels=2, rate=48000, bits=16, frames=64, data_size=None, fmt_size=16, fmt_tag=1):
    block = channels * bits // 8
    data = bytes(rng.getrandbits(8) for _ in range(frames * block))
    size = len(data) if data_size is None else data_size
    fmt = struct.pack("<HHIIHH", fmt_tag, channels, rate, rate * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", fmt_size) + fmt + b"data" + struct.pack("<I", size) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body

def aiff_claiming(frames):
    comm = struct.pack(">hIh", 2, frames, 16) + b"\x40\x0e\xbb\x80" + b"\x00" * 6
    ssnd = struct.pack(">II", 0, 0) + b"\x00" * 32
    body = b"AIFF" + b"COMM" + struct.pack(">I", len(comm)) + comm + b"SSND" + struct.pack(">I", 0x7ffffff0) + ssnd
    return b"FORM" + struct.pack(">I", len(body)) + body

def flac_bogus():
    # STREAMINFO claiming 2^36-1 samples, 8 channels, 1 Hz.
    info = bytearray(34)
    info[10:18] = bytes([0x00, 0x00, 0x1F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    return b"fLaC" + bytes([0x80, 0, 0, 34]) + bytes(info) + bytes(rng.getrandbits(8) for _ in range(200))

def mp4_box(kind, payload):
    return struct.pack(">I", 8 + len(payload)) + kind + payload

def m4a_broken():
    ftyp = mp4_box(b"ftyp", b"M4A \x00\x00\x00\x00M4A mp42isom")
    # A moov whose trak claims a gigantic sample table.
    stsz = mp4_box(b"stsz", b"\x00" * 4 + struct.pack(">II", 0, 0x3fffffff))
    moov = mp4_box(b"moov", mp4_box(b"trak", mp4_box(b"mdia", mp4_box(b"minf", mp4_box(b"stbl", stsz)))))
    return ftyp + moov + mp4_box(b"mdat", b"\x00" * 64)

def caf_huge():
    desc = struct.pack(">dIIIIII", 48000.0, 0x6C70636D, 0, 4, 1, 2, 16)  # 'lpcm'
    return b"caff" + struct.pack(">HH", 1, 0) + b"desc" + struct.pack(">q", len(desc)) + desc \
        + b"data" + struct.pack(">q", 0x7ffffffffffff) + b"\x00" * 4 + b"\x00" * 128

def ogg_page_garbage():
    return b"OggS" + b"\x00\x02" + b"\x00" * 8 + b"\x01\x00\x00\x00" + b"\x00" * 4 + b"\x00\x00\x00\x00" + b"\x01\x1e" \
        + b"\x01vorbis" + bytes(rng.getrandbits(8) for _ in range(23))

seeds = {
    "empty-wav": (0, b""),
    "one-byte-flac": (3, b"f"),
    "truncated-riff-header": (0, wav()[:20]),
    "truncated-wav-data": (0, wav(frames=512)[:300]),
    "wav-data-claims-4GB": (0, wav(data_size=0xFFFFFFF0)),
    "wav-zero-channels": (0, wav(channels=0)),
    "wav-1024-channels": (0, wav(channels=1024, frames=1)),
    "wav-zero-rate": (0, wav(rate=0)),
    "wav-odd-bits": (0, wav(bits=13)),
    "wav-unknown-format-tag": (0, wav(fmt_tag=0x1234)),
    "aiff-claims-2G-frames": (1, aiff_claiming(0x7fffffff)),
    "caf-data-claims-exabytes": (2, caf_huge()),
    "flac-bogus-streaminfo": (3, flac_bogus()),
    "ogg-garbage-vorbis-header": (4, ogg_page_garbage()),
    "opus-is-random-bytes": (5, bytes(rng.getrandbits(8) for _ in range(1024))),
    "mp3-is-a-wav": (6, wav(frames=256)),
    "m4a-gigantic-sample-table": (7, m4a_broken()),
    "mp4-ftyp-only": (8, mp4_box(b"ftyp", b"isom\x00\x00\x02\x00isomiso2mp41")),
    "aac-adts-garbage": (9, b"\xff\xf1" + bytes(rng.getrandbits(8) for _ in range(512))),
    "w64-random": (10, bytes(rng.getrandbits(8) for _ in range(300))),
    "wrong-extension-flac-in-wav": (0, flac_bogus()),
    "unknown-extension": (12, wav()),
}
for name, (index, body) in seeds.items():
    with open(os.path.join(out, name + ".fuzz"), "wb") as f:
        f.write(bytes([index]) + body)
print(f"wrote {len(seeds)} inputs to {out}")
