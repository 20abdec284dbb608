// Tests. Loading Debian's SOFA files, resampling to the engine rate (lengths scale, the ITD in ms does
// not), onset alignment against the raw file, errors.
import AudioDSP
import DSPTestSupport
import Foundation
import SpatialAssets
import Testing

@Suite struct SOFADatasetTests {
    @Test(arguments: [SOFADataset.debianKEMARPath, SOFADataset.debianDefaultPath])
    func debianFilesLoadAtTheirOwnRate(path: String) throws {
        let set = try SOFADataset(path: path, sampleRate: 44_100)
        #expect(set.measurementCount == 710)
        #expect(set.sourceSampleRate == 44_100 && set.sourceFilterLength == 512 && set.resampledFilterLength == 512)
        #expect(set.filterLength > 64 && set.filterLength < 512, "trimmed to \(set.filterLength) taps")
        #expect(set.isMirrorSymmetric)
        #expect(abs(set.radius - 1.4) < 1e-6)
        #expect(set.attributes["DatabaseName"] == "MIT")
        #expect(set.attributes["SOFAConventions"] == "SimpleFreeFieldHRIR")
    }

    /// The ITD of a set's measurement at azimuth ±90°: cross-correlation of the two ears' full responses
    /// (delay + taps), in milliseconds.
    static func itdMilliseconds(_ set: SOFADataset, azimuthDegrees: Double) -> Double {
        let m = set.measurement(
            set.nearestMeasurement(to: SourceDirection(azimuth: azimuthDegrees * Double.pi / 180, elevation: 0)))
        func full(_ taps: [Float], _ delay: Double) -> [Float] {
            [Float](repeating: 0, count: Int(delay.rounded())) + taps
        }
        let l = full(m.left, m.leftDelay)
        let r = full(m.right, m.rightDelay)
        let length = max(l.count, r.count)
        let lag = crossCorrelationLag(
            l + [Float](repeating: 0, count: length - l.count),
            r + [Float](repeating: 0, count: length - r.count), maximumLag: Int(set.sampleRate / 500))
        return lag / set.sampleRate * 1000
    }

    @Test(arguments: [48_000.0, 96_000, 22_050])
    func resamplingScalesTheLengthAndKeepsTheITD(rate: Double) throws {
        let native = try SOFADataset(path: kemarPath, sampleRate: 44_100)
        let set = try SOFADataset(path: kemarPath, sampleRate: rate)
        let ratio = rate / 44_100
        #expect(set.sampleRate == rate && set.sourceSampleRate == 44_100)
        #expect(set.resampledFilterLength == Int((512 * ratio).rounded()))
        #expect(
            abs(Double(set.filterLength) / Double(native.filterLength) - ratio) < 0.1 * ratio,
            "\(native.filterLength) taps at 44.1 kHz, \(set.filterLength) at \(rate)")
        #expect(abs(set.maximumDelayFrames / native.maximumDelayFrames - ratio) < 0.1 * ratio)
        for azimuth in [90.0, -90] {
            let reference = Self.itdMilliseconds(native, azimuthDegrees: azimuth)
            let itd = Self.itdMilliseconds(set, azimuthDegrees: azimuth)
            #expect(abs(reference) > 0.6 && abs(reference) < 0.8, "KEMAR ITD \(reference) ms")
            #expect(abs(itd - reference) < 0.03, "ITD \(itd) ms at \(rate) Hz, \(reference) ms at 44.1 kHz")
        }
    }

    /// Level is kept through resampling: the energy of a measurement scales with the rate ratio's inverse
    /// (the samples are scaled by source/target, and there are ratio times more of them), so the filter's
    /// gain is unchanged.
    @Test func resamplingKeepsTheFiltersGain() throws {
        let native = try SOFADataset(path: kemarPath, sampleRate: 44_100)
        let doubled = try SOFADataset(path: kemarPath, sampleRate: 88_200)
        for index in [0, 100, 260, 500] {
            let a = native.measurement(index)
            let b = doubled.measurement(index)
            let ea = a.left.reduce(0.0) { $0 + Double($1 * $1) } * 44_100
            let eb = b.left.reduce(0.0) { $0 + Double($1 * $1) } * 88_200
            #expect(abs(eb / ea - 1) < 0.02, "measurement \(index): energy per second \(eb / ea)")
        }
    }

    /// At the file's own rate the prepared measurement is the raw one moved by its delay: delay + taps
    /// reproduce the file's IR to within the discarded 1e-5 of its energy.
    @Test func preparedMeasurementsAreTheRawOnesSplitIntoDelayAndTaps() throws {
        let set = try SOFADataset(path: kemarPath, sampleRate: 44_100)
        // Our azimuth +30° (right) is SOFA azimuth 330° (counter-clockwise).
        let raw = try #require(rawMeasurement(path: kemarPath, sofaAzimuth: 330, elevation: 0))
        let m = set.measurement(set.nearestMeasurement(to: SourceDirection(azimuth: Double.pi / 6, elevation: 0)))
        for (taps, delay, reference) in [(m.left, m.leftDelay, raw.left), (m.right, m.rightDelay, raw.right)] {
            #expect(delay == delay.rounded() && delay >= 0)
            var rebuilt = [Float](repeating: 0, count: 512)
            for (k, v) in taps.enumerated() where Int(delay) + k < 512 { rebuilt[Int(delay) + k] = v }
            var error = 0.0
            var total = 0.0
            for n in 0..<512 {
                error += Double((rebuilt[n] - reference[n]) * (rebuilt[n] - reference[n]))
                total += Double(reference[n] * reference[n])
            }
            #expect(error / total < 2.1e-5, "residual \(10 * log10(error / total)) dB")
        }
    }

    @Test func missingAndInvalidFilesThrow() {
        #expect(throws: SOFALoadError.self) { try SOFADataset(path: "/nonexistent/set.sofa", sampleRate: 48_000) }
        // A missing file says so in words, not as libmysofa's number.
        do {
            _ = try SOFADataset(path: "/nonexistent/set.sofa", sampleRate: 48_000)
        } catch {
            #expect(error.reason.contains("no such file"), "\(error)")
        }
        #expect(throws: SOFALoadError.self) { try SOFADataset(path: "/etc/hostname", sampleRate: 48_000) }
        #expect(throws: SOFALoadError.self) { try SOFADataset(path: kemarPath, sampleRate: 100) }
    }
}
