import AudioFiles
import Foundation
import Testing
@Test func zzDebugPrintMessages() throws {
    try withTemporaryDirectory { d in
        func show(_ p: String, _ f: () throws -> Void) { do { try f(); print("MSG ok \(p)") } catch { print("MSG \(error)") } }
        let tone = SignalProbe.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000, frameCount: 48_000)
        for ext in ["wav","aiff","caf","flac"] {
            let full = d.appendingPathComponent("full.\(ext)").path
            try AudioFileWriter.write(AudioData(channels: [tone, tone], sampleRate: 48_000), to: full, encoding: .int16)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            let cut = d.appendingPathComponent("cut.\(ext)").path
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
            show(cut) { _ = try AudioFileReader.load(path: cut) }
            if ext != "flac" { let hdr = d.appendingPathComponent("hdr.\(ext)").path
            try bytes.prefix(bytes.count - 48_000*4 + 1000).write(to: URL(fileURLWithPath: hdr))
            show(hdr) { _ = try AudioFileReader.load(path: hdr) } }
            var b = bytes; let m = b.count/2; b.replaceSubrange(m..<m+256, with: seededBytes(count: 256, seed: 5))
            let cor = d.appendingPathComponent("corrupt.\(ext)").path
            try b.write(to: URL(fileURLWithPath: cor)); show(cor) { _ = try AudioFileReader.load(path: cor) }
        }
        for ext in ["ogg","opus","mp3"] {
            let full = d.appendingPathComponent("full.\(ext)").path
            try AudioFileWriter.write(AudioData(channels: [tone, tone], sampleRate: 48_000), to: full)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
            let cut = d.appendingPathComponent("cut.\(ext)").path
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
            show(cut) { let a = try AudioFileReader.load(path: cut); print("MSG frames \(a.frameCount)") }
            try? FileManager.default.removeItem(atPath: "/tmp/probe/keep-cut.\(ext)"); try FileManager.default.copyItem(atPath: cut, toPath: "/tmp/probe/keep-cut.\(ext)")
            var b = bytes; let m = b.count/2; b.replaceSubrange(m..<m+256, with: seededBytes(count: 256, seed: 5))
            let cor = d.appendingPathComponent("corrupt.\(ext)").path
            try b.write(to: URL(fileURLWithPath: cor)); show(cor) { let a = try AudioFileReader.load(path: cor); print("MSG frames \(a.frameCount)") }
        }
        var bytes = Array("RIFF".utf8) + [0x24, 0x10, 0, 0] + Array("WAVE".utf8); bytes += seededBytes(count: 4_096, seed: 11)
        let fake = d.appendingPathComponent("fake.wav").path; try Data(bytes).write(to: URL(fileURLWithPath: fake)); show(fake) { _ = try AudioFileReader.load(path: fake) }
        show("x") { _ = try AudioFileReader.load(path: d.path) }
        show("x") { _ = try AudioFileReader.load(path: "/nonexistent/a.wav") }
        show("x") { _ = try AudioFileReader.load(path: "/dev/null") }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 44_100), to: d.appendingPathComponent("a.opus").path) }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone,tone,tone], sampleRate: 44_100), to: d.appendingPathComponent("a.mp3").path) }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 44_100), to: d.appendingPathComponent("a.xyz").path) }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 44_100), to: "/nonexistent/a.wav") }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 44_100), to: d.path + "/") }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 44_100), to: "/proc/a.wav") }
        show("x") { try AudioFileWriter.write(AudioData(channels: Array(repeating: tone, count: 9), sampleRate: 48_000), to: d.appendingPathComponent("a9.ogg").path); print("MSG 9ch ogg ok") }
        show("x") { try AudioFileWriter.write(AudioData(channels: Array(repeating: tone, count: 8), sampleRate: 48_000), to: d.appendingPathComponent("a8.opus").path); print("MSG 8ch opus ok") }
        show("x") { try AudioFileWriter.write(AudioData(channels: Array(repeating: tone, count: 8), sampleRate: 48_000), to: d.appendingPathComponent("a8.flac").path); print("MSG 8ch flac ok") }
        show("x") { try AudioFileWriter.write(AudioData(channels: [tone], sampleRate: 44_100), to: "/dev/full", format: .wav) }
    }
}
