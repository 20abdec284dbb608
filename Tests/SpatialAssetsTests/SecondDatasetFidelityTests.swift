// Tests. The fidelity measurement of `HRTFFidelityTests` on a second data set with another rate and
// grid: KEMAR resampled to 32 kHz with its grid turned by 2.5° in azimuth, written as a SOFA file by
// scripts/make-test-sofa.py (Debian's python3-h5py) and read back through libmysofa.
import AudioDSP
import DSPTestSupport
import Foundation
@testable import SpatialAssets
import Testing

/// The Python with h5py that writes the file (Debian's, which scripts/setup.sh gives python3-h5py).
enum SOFAWriter {
    static let python = "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/make-test-sofa.py").path

    static var isAvailable: Bool {
        run([python, "-c", "import h5py, numpy"]) == 0
    }

    @discardableResult
    static func run(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Writes the second data set into a new temporary folder and returns its path.
    static func write(rate: Int, azimuthOffset: Double) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "soundstage-sofa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("kemar-\(rate).sofa").path
        let status = run([python, script, kemarPath, path, "\(rate)", "\(azimuthOffset)"])
        try #require(status == 0, "make-test-sofa.py failed (status \(status))")
        return path
    }
}

@Suite(
    .serialized,
    .requiresTool("python3-h5py", SOFAWriter.isAvailable, "needs Debian's python3-h5py to write the SOFA file"))
struct SecondDatasetFidelityTests {
    @Test func theWrittenFileHasAnotherRateAndGrid() throws {
        let path = try SOFAWriter.write(rate: 32_000, azimuthOffset: 2.5)
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        let raw = try RawDataset(path: path, rate: 32_000)
        let kemar = try RawDataset(path: kemarPath, rate: 44_100)
        #expect(raw.count == kemar.count)
        // Every azimuth moved by 2.5° (none left on KEMAR's grid).
        for i in 0..<raw.count {
            var d = (raw.azimuths[i] - kemar.azimuths[i]).truncatingRemainder(dividingBy: 360)
            if d < 0 { d += 360 }
            #expect(abs(d - 2.5) < 1e-3)
        }
        let set = try SOFADataset(path: path, sampleRate: 32_000)
        #expect(set.sampleRate == 32_000)
    }

    /// Every second measured direction, at 48 kHz, both modes: every target of `HRTFFidelityTests`
    /// (`SPATIAL.md`).
    @Test(arguments: [(HRTFQuality.standard, 0.5, 1.0), (.high, 0.5, 0.5)])
    func renderedCuesMatchTheSecondDataset(quality: HRTFQuality, octaveILD: Double, magnitude: Double) throws {
        let path = try SOFAWriter.write(rate: 32_000, azimuthOffset: 2.5)
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        let f = try HRTFFidelityTests.measure(rate: 48_000, quality: quality, stride: 2, path: path)
        print(
            "fidelity second data set (32 kHz, turned 2.5°) at 48000 Hz \(quality == .standard ? "HRTF" : "HRTF HQ"): \(f)"
        )
        #expect(f.itdLow <= 0.5, "\(f)")
        #expect(f.itdBroadband <= 0.5, "\(f)")
        #expect(f.itdOverHalf == 0, "\(f)")
        #expect(f.wrongSide == 0, "\(f)")
        #expect(f.ild <= 0.5, "\(f)")
        #expect(f.ildBand <= octaveILD, "\(f)")
        #expect(f.magnitude <= magnitude, "\(f)")
    }
}
