// Tests (control side). soxr conversion keeps length, pitch, level and timing: the output has
// round(frames × ratio) frames, a tone keeps its frequency and level, and a click stays in place.

import AudioFiles
import Foundation
import Testing

@Suite("Sample-rate conversion")
struct SampleRateConverterTests {
    static let lengths = [0, 1, 7, 1_001, 12_345, 44_100, 44_101]

    @Test(arguments: lengths)
    func outputHasRoundedScaledFrameCount(_ frames: Int) throws {
        let input = AudioData(channels: [[Float](repeating: 0.25, count: frames)], sampleRate: 44_100)
        let output = try SampleRateConverter().convert(input, to: 48_000)
        #expect(output.frameCount == Int((Double(frames) * 48_000 / 44_100).rounded()))
        #expect(output.sampleRate == 48_000)
        #expect(output.channelCount == 1)
    }

    @Test func sineKeepsFrequencyAndLevelAt48kHz() throws {
        let amplitude = 0.5
        let tones = [1_000.0, 5_000.0]
        let input = AudioData(
            channels: tones.map {
                SignalProbe.sine(frequency: $0, amplitude: amplitude, sampleRate: 44_100, frameCount: 44_100)
            },
            sampleRate: 44_100)
        let output = try SampleRateConverter().convert(input, to: 48_000)
        #expect(output.frameCount == 48_000)
        // Away from the edges, where the filter sees the start/end of the signal.
        let range = 4_800..<43_200
        for (channel, frequency) in tones.enumerated() {
            let samples = output.channels[channel]
            let level = SignalProbe.amplitude(of: samples, at: frequency, sampleRate: 48_000, range: range)
            let error = SignalProbe.decibels(level, relativeTo: amplitude)
            #expect(abs(error) <= 0.1, "\(frequency) Hz level changed by \(error) dB")
            // Nearly all the energy stays at the same frequency (anything else ≥ 60 dB down).
            let fraction = SignalProbe.energyFraction(of: samples, at: frequency, sampleRate: 48_000, range: range)
            #expect(fraction >= 0.999_999, "\(frequency) Hz holds only \(fraction) of the energy")
        }
    }

    @Test(arguments: [(44_100.0, 48_000.0), (48_000.0, 44_100.0), (44_100.0, 96_000.0), (48_000.0, 8_000.0)])
    func clickLandsAtScaledPosition(_ rates: (Double, Double)) throws {
        let (source, target) = rates
        let frames = 20_000
        for position in [1_000, 7_777, 12_345] {
            var samples = [Float](repeating: 0, count: frames)
            samples[position] = 1
            let output = try SampleRateConverter().convert(
                AudioData(channels: [samples], sampleRate: source), to: target)
            let expected = Double(position) * target / source
            let peak = SignalProbe.peakIndex(of: output.channels[0])
            #expect(abs(Double(peak) - expected) <= 1, "click at \(position) → \(peak), expected \(expected)")
        }
    }

    @Test func equalRatesReturnInputUnchanged() throws {
        let input = AudioData(channels: [[0.1, -0.2, 0.3]], sampleRate: 48_000)
        #expect(try SampleRateConverter().convert(input, to: 48_000) == input)
    }

    @Test func invalidRatesAndRaggedChannelsAreRejected() {
        let ragged = AudioData(channels: [[0, 0, 0], [0]], sampleRate: 44_100)
        #expect(throws: SampleRateConversionError.self) { try SampleRateConverter().convert(ragged, to: 48_000) }
        let valid = AudioData(channels: [[0, 0, 0]], sampleRate: 44_100)
        for rate in [0.0, -48_000, .nan, .infinity, 44_100 * 1_000] {
            #expect(throws: SampleRateConversionError.self) { try SampleRateConverter().convert(valid, to: rate) }
        }
        let zeroRate = AudioData(channels: [[0, 0, 0]], sampleRate: 0)
        #expect(throws: SampleRateConversionError.self) { try SampleRateConverter().convert(zeroRate, to: 48_000) }
    }

    @Test func readerConvertsFileToTargetRate() throws {
        let input = AudioData(
            channels: [SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 44_100, frameCount: 22_050)],
            sampleRate: 44_100)
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("tone44k.wav").path
            try AudioFileWriter.write(input, to: path)
            let read = try AudioFileReader.load(path: path, targetSampleRate: 48_000)
            #expect(read.sampleRate == 48_000)
            #expect(read.frameCount == 24_000)
            let level = SignalProbe.amplitude(
                of: read.channels[0], at: 1_000, sampleRate: 48_000, range: 4_800..<19_200)
            #expect(abs(SignalProbe.decibels(level, relativeTo: 0.5)) <= 0.1)

            // A region is cut in the file's frames first, then converted.
            let region = try AudioFileReader.load(
                path: path, targetSampleRate: 48_000, startFrame: 4_410, frameCount: 4_410)
            #expect(region.frameCount == 4_800)
        }
    }

    @Test func readerRejectsInvalidTargetRateNamingTheFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("short.wav").path
            try AudioFileWriter.write(AudioData(channels: [[0, 0, 0, 0]], sampleRate: 48_000), to: path)
            let error = #expect(throws: AudioFileError.self) {
                try AudioFileReader.load(path: path, targetSampleRate: 0)
            }
            #expect(error?.description.contains("short.wav") == true)
            let farRate = #expect(throws: AudioFileError.self) {
                try AudioFileReader.load(path: path, targetSampleRate: 48_000 * 1_000)
            }
            guard case .rateConversionFailed(let failedPath, let rate, _) = farRate else {
                Issue.record("expected rateConversionFailed, got \(String(describing: farRate))")
                return
            }
            #expect(failedPath == path)
            #expect(rate == 48_000_000)
        }
    }
}
