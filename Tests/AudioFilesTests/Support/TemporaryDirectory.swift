// Test support (control side only). A scratch directory per test, removed afterwards, plus small
// byte-level helpers for damaging files on purpose.

import Foundation

/// Runs `body` with a fresh, empty directory and deletes it (and its contents) afterwards.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("AudioFilesTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Deterministic pseudo-random bytes (xorshift64*), so damaged-file tests are reproducible.
func seededBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    return (0..<count).map { _ in
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
    }
}
