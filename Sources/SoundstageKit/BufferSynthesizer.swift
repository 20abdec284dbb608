// Control side. Builds the synthetic buffers a patch can declare with `generate:`.
import Foundation
import Patches

/// Renders a `PatchGenerator` into planar samples at a given rate.
public enum BufferSynthesizer {
    /// Planar samples (`generator.channelCount` identical channels, except noise which differs per
    /// channel) of `round(duration × sampleRate)` frames. Periodic waveforms start at phase 0; `click` is
    /// a single full-amplitude sample at frame 0.
    public static func render(_ generator: PatchGenerator, sampleRate: Double) -> [[Float]] {
        let frames = max(1, Int((generator.duration * sampleRate).rounded()))
        let amplitude = Float(generator.amplitude)
        let frequency = generator.frequency ?? 440
        var channels: [[Float]] = []
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<generator.channelCount {
            var samples = [Float](repeating: 0, count: frames)
            switch generator.waveform {
            case .sine:
                for i in 0..<frames {
                    samples[i] = amplitude * Float(sin(2 * .pi * frequency * Double(i) / sampleRate))
                }
            case .square:
                for i in 0..<frames {
                    let phase = (frequency * Double(i) / sampleRate).truncatingRemainder(dividingBy: 1)
                    samples[i] = phase < 0.5 ? amplitude : -amplitude
                }
            case .saw:
                for i in 0..<frames {
                    let phase = (frequency * Double(i) / sampleRate).truncatingRemainder(dividingBy: 1)
                    samples[i] = amplitude * Float(2 * phase - 1)
                }
            case .triangle:
                for i in 0..<frames {
                    let phase = (frequency * Double(i) / sampleRate).truncatingRemainder(dividingBy: 1)
                    samples[i] = amplitude * Float(phase < 0.5 ? 4 * phase - 1 : 3 - 4 * phase)
                }
            case .noise:
                for i in 0..<frames {
                    seed ^= seed << 13
                    seed ^= seed >> 7
                    seed ^= seed << 17
                    samples[i] = amplitude * Float(Double(seed >> 11) / Double(1 << 53) * 2 - 1)
                }
            case .silence:
                break
            case .click:
                samples[0] = amplitude
            }
            channels.append(samples)
        }
        return channels
    }
}
