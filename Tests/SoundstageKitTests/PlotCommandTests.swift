// `render --plot` and `info --plot`: the picture shows each channel's tone at its frequency and its
// waveform at its amplitude, read back from the PNG's pixels (decoded by netpbm's pngtopnm).
import AudioFiles
import DSPTestSupport
import Foundation
import Testing

private func isInstalled(_ tool: String) -> Bool {
    FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool)
}

@Suite(
    .requiresTool("sox", isInstalled("sox"), "--plot needs sox"),
    .requiresTool("gnuplot", isInstalled("gnuplot"), "--plot needs gnuplot (gnuplot-nox)"),
    .requiresTool("pngtopnm", isInstalled("pngtopnm"), "the tests decode PNGs with netpbm"))
struct PlotCommandTests {

    /// The picture's geometry as docs/PLOTS.md gives it, in pixels from the top left.
    enum Geometry {
        static let width = 1000
        static let left = 70
        static let right = 980
        static let top = 34
        static let waveformHeight = 70
        static let spectrogramHeight = 120
        static let gap = 6
        static let groupGap = 34
        static let bottom = 40

        static func height(channels n: Int) -> Int {
            top + n * (waveformHeight + spectrogramHeight) + 2 * (n - 1) * gap + groupGap + bottom
        }

        static func waveformRows(_ c: Int) -> ClosedRange<Int> {
            let first = top + c * (waveformHeight + gap)
            return first...(first + waveformHeight)
        }

        static func spectrogramRows(_ c: Int, channels n: Int) -> ClosedRange<Int> {
            let first = top + n * waveformHeight + (n - 1) * gap + groupGap + c * (spectrogramHeight + gap)
            return first...(first + spectrogramHeight)
        }
    }

    /// An RGB picture decoded from a PNG.
    struct Picture {
        var width: Int
        var height: Int
        var pixels: [UInt8]

        init(png path: String) throws {
            (width, height, pixels) = try Self.parsePPM(Self.ppm(path))
        }

        /// pngtopnm's output, as bytes.
        private static func ppm(_ path: String) throws -> Data {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/pngtopnm")
            process.arguments = [path]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }

        /// A binary PPM (P6, 8-bit): "P6", width, height, maximum, each after whitespace, then the bytes.
        private static func parsePPM(_ data: Data) throws -> (Int, Int, [UInt8]) {
            let bytes = [UInt8](data)
            var index = 0
            var fields: [String] = []
            while fields.count < 4 {
                while index < bytes.count, bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) { index += 1 }
                var field = ""
                while index < bytes.count, !(bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index])) {
                    field.append(Character(UnicodeScalar(bytes[index])))
                    index += 1
                }
                fields.append(field)
            }
            index += 1
            try #require(fields[0] == "P6" && fields[3] == "255", "not an 8-bit P6: \(fields)")
            let width = try #require(Int(fields[1]))
            let height = try #require(Int(fields[2]))
            try #require(bytes.count - index == width * height * 3)
            return (width, height, Array(bytes[index...]))
        }

        func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * width + x) * 3
            return (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
        }
    }

    /// Checks the picture of `channels` tones: channel c's waveform spans ±amplitude[c] and its
    /// spectrogram's brightest row sits at frequency[c].
    static func checkTones(
        _ path: String, rate: Double, amplitudes: [Double], frequencies: [Double],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let picture = try Picture(png: path)
        let n = amplitudes.count
        #expect(picture.width == Geometry.width, sourceLocation: sourceLocation)
        #expect(picture.height == Geometry.height(channels: n), sourceLocation: sourceLocation)
        let columns = (Geometry.left + 60)...(Geometry.right - 60)
        for c in 0..<n {
            // The waveform: the rows that hold its colour (#3b6fb6) in the middle of the panel's width
            // (a band of peaks for a long file, a line for a short one).
            let rows = Geometry.waveformRows(c)
            let painted = rows.filter { y in
                columns.filter { x in
                    let (r, g, b) = picture.rgb(x, y)
                    return abs(r - 0x3b) < 30 && abs(g - 0x6f) < 30 && abs(b - 0xb6) < 30
                }.count >= 2
            }
            let centre = Double(rows.lowerBound + rows.upperBound) / 2
            let halfHeight = Double(Geometry.waveformHeight) / 2
            let top = try #require(painted.first, "channel \(c + 1): no waveform drawn", sourceLocation: sourceLocation)
            let bottom = try #require(painted.last, sourceLocation: sourceLocation)
            let drawnTop = (centre - Double(top)) / halfHeight
            let drawnBottom = (Double(bottom) + 1 - centre) / halfHeight
            #expect(
                abs(drawnTop - amplitudes[c]) < 0.06 && abs(drawnBottom - amplitudes[c]) < 0.06,
                "channel \(c + 1): waveform spans +\(drawnTop) / −\(drawnBottom), the audio ±\(amplitudes[c])",
                sourceLocation: sourceLocation)
            // The spectrogram: its brightest row, mapped from pixels to hertz (0 at the bottom, rate/2 on top).
            let spectrum = Geometry.spectrogramRows(c, channels: n)
            let inner = (spectrum.lowerBound + 2)...(spectrum.upperBound - 2)
            let brightness = inner.map { y in
                columns.reduce(0) { sum, x in
                    let (r, g, b) = picture.rgb(x, y)
                    return sum + r + g + b
                }
            }
            let brightest = inner.lowerBound + brightness.indices.max { brightness[$0] < brightness[$1] }!
            let hertz = Double(spectrum.upperBound - brightest) / Double(Geometry.spectrogramHeight) * rate / 2
            #expect(
                abs(hertz - frequencies[c]) < 2.5 * rate / 2 / Double(Geometry.spectrogramHeight),
                "channel \(c + 1): the brightest row is at \(hertz) Hz, the tone at \(frequencies[c]) Hz",
                sourceLocation: sourceLocation)
        }
    }

    static func writeTones(_ path: String, rate: Double, frames: Int, amplitudes: [Double], frequencies: [Double])
        throws
    {
        let channels = zip(amplitudes, frequencies).map { amplitude, frequency in
            (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / rate)) }
        }
        let writer = try AudioFileWriter(
            path: path, format: .wav, sampleRate: rate, channelCount: channels.count, encoding: .float32)
        try writer.write(channels: channels)
        try writer.close()
    }

    @Test func infoPlotShowsEachChannelsToneAtItsFrequencyAndAmplitude() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("tones.wav").path
        try Self.writeTones(audio, rate: 16_000, frames: 32_000, amplitudes: [0.5, 0.9], frequencies: [1000, 5000])
        let picture = dir.appendingPathComponent("tones.png").path
        let r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", picture])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Channels:         2") && r.stdout.contains("plotted \(audio) into \(picture)"))
        try Self.checkTones(picture, rate: 16_000, amplitudes: [0.5, 0.9], frequencies: [1000, 5000])
        // Nothing is left beside the picture.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["tones.png", "tones.wav"])
    }

    @Test func renderPlotShowsWhatWasRendered() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 1 kHz hard left, 5 kHz hard right; each buffer holds whole cycles, so the loops are seamless.
        let patch = try Fixtures.write(
            """
            version: 1
            engine: { sampleRate: 16000, outputs: 2 }
            buffers:
              - { name: low, generate: { waveform: sine, frequency: 1000, duration: 0.1, amplitude: 0.8 } }
              - { name: high, generate: { waveform: sine, frequency: 5000, duration: 0.1, amplitude: 0.3 } }
            nodes:
              - { name: left, kind: player, params: { buffer: low, loop: true, playing: true, pan: -1 } }
              - { name: right, kind: player, params: { buffer: high, loop: true, playing: true, pan: 1 } }
            connections:
              - { from: left, to: main }
              - { from: right, to: main }
            """, to: "tones.yaml", in: dir)
        let out = dir.appendingPathComponent("tones.flac").path
        let picture = dir.appendingPathComponent("tones.png").path
        let r = try Fixtures.run(
            Fixtures.executable, ["render", patch, "--out", out, "--duration", "1.5", "--plot", picture])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("plotted the render into \(picture)"), "\(r.stdout)")
        // The waveform's extent is the rendered file's peak, channel by channel.
        let rendered = try AudioFileReader.load(path: out)
        let peaks = rendered.channels.map { Double($0.map(abs).max() ?? 0) }
        #expect(peaks[0] > 0.5 && peaks[1] > 0.2, "peaks \(peaks)")
        try Self.checkTones(picture, rate: 16_000, amplitudes: peaks, frequencies: [1000, 5000])
    }

    @Test func aPictureThatCannotBeMadeIsRefusedClearlyAndNothingIsWritten() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("tone.wav").path
        try Self.writeTones(audio, rate: 16_000, frames: 1600, amplitudes: [0.5], frequencies: [1000])
        let hello = Fixtures.patches.appendingPathComponent("hello.yaml").path
        let out = dir.appendingPathComponent("out.wav").path

        // A folder that does not exist: refused before the render, which writes nothing either.
        let missingFolder = dir.appendingPathComponent("none/plot.png").path
        var r = try Fixtures.run(
            Fixtures.executable, ["render", hello, "--out", out, "--duration", "0.2", "--plot", missingFolder])
        #expect(r.status != 0 && r.stderr.contains("--plot: cannot write the picture"), "\(r.stderr)")
        #expect(r.stderr.contains("directory does not exist"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // A directory, and a name that is not a PNG's.
        r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", dir.path])
        #expect(r.status != 0 && r.stderr.contains("directory"), "\(r.stderr)")
        r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", dir.appendingPathComponent("x.jpg").path])
        #expect(r.status != 0 && r.stderr.contains("name the file .png"), "\(r.stderr)")
        r = try Fixtures.run(Fixtures.executable, ["info", audio, audio, "--plot", missingFolder])
        #expect(r.status != 0 && r.stderr.contains("--plot draws one file; 2 were given"), "\(r.stderr)")
        r = try Fixtures.run(Fixtures.executable, ["info", audio, "--json", "--plot", "-"])
        #expect(r.status != 0 && r.stderr.contains("share standard output") && r.stdout.isEmpty, "\(r.stderr)")
        r = try Fixtures.run(Fixtures.executable, ["render", hello, "--out", "-", "--duration", "0.2", "--plot", "-"])
        #expect(r.status != 0 && r.stderr.contains("is also --out") && r.stdout.isEmpty, "\(r.stderr)")

        // A missing tool is named with the Debian package to install; an existing picture is untouched.
        let old = dir.appendingPathComponent("old.png").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: old))
        let bin = dir.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", old], environment: ["PATH": bin.path])
        #expect(r.status != 0 && r.stderr.contains("needs sox") && r.stderr.contains("apt-get install sox"))
        try FileManager.default.createSymbolicLink(
            atPath: bin.appendingPathComponent("sox").path, withDestinationPath: "/usr/bin/sox")
        r = try Fixtures.run(
            Fixtures.executable, ["render", hello, "--out", out, "--duration", "0.2", "--plot", old],
            environment: ["PATH": bin.path])
        #expect(r.status != 0 && r.stderr.contains("apt-get install gnuplot-nox"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try String(contentsOfFile: old, encoding: .utf8) == "old")

        // An input that is not audio: its error, and no picture.
        let notAudio = try Fixtures.write("not audio\n", to: "text.wav", in: dir)
        let picture = dir.appendingPathComponent("text.png").path
        r = try Fixtures.run(Fixtures.executable, ["info", notAudio, "--plot", picture])
        #expect(r.status != 0 && r.stderr.contains("text.wav"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: picture))
        // No working files are left behind.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("partial") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func aSymbolicLinksTargetIsWrittenAndTheLinkStays() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("tone.wav").path
        try Self.writeTones(audio, rate: 16_000, frames: 16_000, amplitudes: [0.5], frequencies: [1000])
        let target = dir.appendingPathComponent("target.png").path
        let link = dir.appendingPathComponent("link.png").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", link, "--quiet"])
        #expect(r.status == 0 && r.stdout.isEmpty, "\(r.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        try Self.checkTones(target, rate: 16_000, amplitudes: [0.5], frequencies: [1000])
    }

    @Test func aPictureOnStandardOutputSendsTheDescriptionToStandardError() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("tone.wav").path
        try Self.writeTones(audio, rate: 16_000, frames: 8000, amplitudes: [0.5], frequencies: [1000])
        let r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.dropFirst().hasPrefix("PNG\r\n") && r.stderr.contains("Channels:"), "\(r.stderr)")
    }

    /// A signal while the audio is gathered removes the scratch copy (as large as the audio) and
    /// writes no picture.
    @Test func anInterruptedPlotLeavesNothingBehind() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scratch = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let hello = Fixtures.patches.appendingPathComponent("hello.yaml").path
        let out = dir.appendingPathComponent("long.wav").path
        let picture = dir.appendingPathComponent("long.png").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.executable)
        process.arguments = ["render", hello, "--out", out, "--duration", "3600", "--plot", picture, "--quiet"]
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": scratch.path]) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Wait until the scratch audio is being written, then interrupt.
        let deadline = Date().addingTimeInterval(60)
        func scratchFiles() -> [String] {
            (FileManager.default.enumerator(atPath: scratch.path)?.allObjects as? [String]) ?? []
        }
        while process.isRunning, Date() < deadline, !scratchFiles().contains(where: { $0.hasSuffix("audio.wav") }) {
            usleep(20_000)
        }
        #expect(process.isRunning, "the render of an hour ended before it could be interrupted")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGTERM)
        #expect(scratchFiles().isEmpty, "left in TMPDIR: \(scratchFiles())")
        #expect(!FileManager.default.fileExists(atPath: picture) && !FileManager.default.fileExists(atPath: out))
    }

    /// sox makes fewer spectrogram columns for a short file than the panel has: they are stretched
    /// across the panel, so the picture still spans 0 s … the duration.
    @Test func aShortFileFillsThePanels() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = dir.appendingPathComponent("short.wav").path
        try Self.writeTones(audio, rate: 16_000, frames: 400, amplitudes: [0.7], frequencies: [1000])
        let picture = dir.appendingPathComponent("short.png").path
        let r = try Fixtures.run(Fixtures.executable, ["info", audio, "--plot", picture, "--quiet"])
        #expect(r.status == 0, "\(r.stderr)")
        try Self.checkTones(picture, rate: 16_000, amplitudes: [0.7], frequencies: [1000])
        let decoded = try Picture(png: picture)
        let rows = Geometry.spectrogramRows(0, channels: 1)
        let middle = (rows.lowerBound + rows.upperBound) / 2
        for x in [Geometry.left + 3, Geometry.width / 2, Geometry.right - 3] {
            let (red, green, blue) = decoded.rgb(x, middle)
            #expect(red + green + blue < 3 * 200, "column \(x) of the spectrogram is blank")
        }
    }
}
