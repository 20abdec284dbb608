import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
@testable import SoundstageKit
import Synchronization
import Testing

@Suite struct RecorderTests {
    /// Tap blocks of 256 frames; renders below are whole multiples so every block is delivered.
    static let block = 256

    @Test(arguments: ["take.wav", "take.caf"])
    func floatRecordingEqualsTheRenderedOutputSampleForSample(name: String) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent(name).path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        let log = RecorderEventLog(recorder)
        try recorder.record()
        #expect(recorder.isRecording)
        let rendered = RecorderFixture.render(engine, frames: 200 * Self.block)
        recorder.stop()
        #expect(!recorder.isRecording)
        #expect(log.finishes == [true])

        let file = try AudioFileReader.load(path: path)
        #expect(file.sampleRate == RecorderFixture.rate)
        #expect(file.channelCount == 2)
        #expect(file.frameCount == rendered[0].count)
        #expect(file.channels == rendered)
        #expect(SignalStats.rms(rendered[0][...]) > 0.1)  // the comparison is not between silences
        #expect(recorder.recordedFrameCount == 200 * Self.block)
    }

    /// Freeing the recorded node ends the take: the file is complete and holds exactly what was
    /// recorded until then, the recorder says why, and it is no longer recording.
    @Test func freeingTheRecordedNodeEndsTheTakeAndSaysSo() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("take.wav").path
        let recorder = try Recorder(engine: engine, node: "p", path: path)
        engine.setEventHandler { recorder.handle($0) }
        let log = RecorderEventLog(recorder)
        try recorder.record()
        let rendered = RecorderFixture.render(engine, frames: 100 * Self.block)
        try engine.detach("p")
        engine.poll()
        recorder.stop()  // waits for the take that ended by itself to close
        #expect(!recorder.isRecording)
        #expect(log.errors == [.nodeFreed(path: path, node: "p")])
        #expect(log.finishes == [true])
        let file = try AudioFileReader.load(path: path)
        #expect(file.frameCount == 100 * Self.block)
        #expect(file.channels == rendered)
        #expect(throws: RecorderError.self) { try recorder.record() }
    }

    /// A take whose engine changes rate (the JACK server came back at another one) ends there: its file
    /// keeps its rate and holds only what was recorded at it, and the recorder says why.
    @Test func aSampleRateChangeEndsTheTakeAndSaysSo() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("take.wav").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        let log = RecorderEventLog(recorder)
        try recorder.record()
        let rendered = RecorderFixture.render(engine, frames: 100 * Self.block)
        engine.poll()
        engine.setSampleRate(44_100)
        _ = RecorderFixture.render(engine, frames: 50 * Self.block)
        engine.poll()
        recorder.stop()
        #expect(!recorder.isRecording)
        #expect(log.errors == [.sampleRateChanged(path: path, from: RecorderFixture.rate, to: 44_100)])
        #expect(log.finishes == [true])
        let file = try AudioFileReader.load(path: path)
        #expect(file.sampleRate == RecorderFixture.rate)
        #expect(file.frameCount == 100 * Self.block)
        #expect(file.channels == rendered)
    }

    @Test func flacRecordingMatchesTheRenderWithin24BitQuantization() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("take.flac").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        try recorder.record()
        let rendered = RecorderFixture.render(engine, frames: 100 * Self.block)
        recorder.stop()

        let file = try AudioFileReader.load(path: path)
        #expect(file.frameCount == rendered[0].count)
        let step: Float = 1.0 / 8_388_608  // one int24 step
        for c in 0..<2 {
            let worst = zip(file.channels[c], rendered[c]).map { abs($0 - $1) }.max() ?? 1
            #expect(worst <= step)
        }
    }

    @Test(arguments: ["take.ogg", "take.opus", "take.mp3"])
    func lossyRecordingsKeepTheLengthAndTheTone(name: String) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tone = TestSignal.sine(frequency: 1_000, sampleRate: RecorderFixture.rate, frames: 48_000, amplitude: 0.5)
        let engine = try RecorderFixture.engine(playing: [tone, tone])
        let path = dir.appendingPathComponent(name).path
        let recorder = try Recorder(engine: engine, node: "p", path: path)
        let log = RecorderEventLog(recorder)
        try recorder.record(forDuration: 0.5)
        _ = RecorderFixture.render(engine, frames: 48_000)
        #expect(log.waitForFinish())
        #expect(log.finishes == [true])
        let file = try AudioFileReader.load(path: path)
        let slack = name.hasSuffix(".mp3") ? 1152 : 0  // libsndfile's MP3 decoder rounds to whole MPEG frames
        #expect(abs(file.frameCount - 24_000) <= slack, "\(file.frameCount) frames")
        let middle = Array(file.channels[0][4_800..<19_200])
        let amplitude = Goertzel.amplitude(middle, frequency: 1_000, sampleRate: RecorderFixture.rate)
        #expect(abs(Decibels.fromAmplitude(amplitude) - Decibels.fromAmplitude(0.5)) < 0.5, "\(amplitude)")
    }

    @Test func recordsTheLiveInputExactly() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: RecorderFixture.rate, outputChannelCount: 2, inputChannelCount: 2))
        try engine.attach(.input, name: "input")
        let capture = RecorderFixture.noise(frames: 60 * Self.block, seed: 99)
        let path = dir.appendingPathComponent("mic.wav").path
        let recorder = try Recorder(engine: engine, node: "input", path: path)
        #expect(recorder.channelCount == 2)
        try recorder.record()
        _ = RecorderFixture.render(engine, frames: capture[0].count, inputs: capture)
        recorder.stop()
        #expect(try AudioFileReader.load(path: path).channels == capture)
    }

    @Test(arguments: [(0.25, 256), (1001.0 / 48_000, 64), (0.5, 4096)])
    func durationRecordingStopsAtExactlyThatManyFrames(duration: Double, tapFrames: Int) throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("short.wav").path
        let recorder = try Recorder(
            engine: engine, node: "main", path: path, settings: RecorderSettings(tapFrameCount: tapFrames))
        let log = RecorderEventLog(recorder)
        try recorder.record(forDuration: duration)
        let rendered = RecorderFixture.render(engine, frames: 48_000)
        #expect(log.waitForFinish())
        #expect(log.finishes == [true])
        #expect(!recorder.isRecording)

        let expected = Int((duration * RecorderFixture.rate).rounded())
        #expect(recorder.recordedFrameCount == expected)
        let file = try AudioFileReader.load(path: path)
        #expect(file.frameCount == expected)
        #expect(file.channels == RecorderFixture.slice(rendered, 0..<expected))
    }

    @Test func pauseLeavesOutExactlyThePausedSpan() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("paused.caf").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        try recorder.record()
        let before = RecorderFixture.render(engine, frames: 40 * Self.block)
        recorder.pause()
        #expect(!recorder.isRecording)
        #expect(recorder.currentTime == Double(40 * Self.block) / RecorderFixture.rate)
        let paused = RecorderFixture.render(engine, frames: 30 * Self.block)
        #expect(FileManager.default.fileExists(atPath: path))  // still open, not deleted or reset
        try recorder.record()
        let after = RecorderFixture.render(engine, frames: 50 * Self.block)
        recorder.stop()

        let file = try AudioFileReader.load(path: path)
        #expect(file.frameCount == 90 * Self.block)
        #expect(file.channels == RecorderFixture.concatenate([before, after]))
        // The paused span really was different audio (so leaving it out is observable).
        #expect(paused[0] != Array(after[0][0..<paused[0].count]))
    }

    @Test func metersReadASinesPeakAndRMSWithinATenthOfADecibel() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 1 kHz (48 samples a cycle, so a sample lands on each crest): 0.5 left, 0.25 right.
        let left = TestSignal.sine(frequency: 1_000, sampleRate: RecorderFixture.rate, frames: 48_000, amplitude: 0.5)
        let right = left.map { $0 / 2 }
        let engine = try RecorderFixture.engine(playing: [left, right])
        let recorder = try Recorder(engine: engine, node: "p", path: dir.appendingPathComponent("m.wav").path)
        try recorder.record()
        _ = RecorderFixture.render(engine, frames: 24_000)
        recorder.updateMeters()
        #expect(recorder.peakPower(forChannel: 0) == -160)  // metering is off by default

        recorder.isMeteringEnabled = true
        _ = RecorderFixture.render(engine, frames: 48_000)
        recorder.updateMeters()
        let tolerance: Float = 0.1
        #expect(abs(recorder.peakPower(forChannel: 0) - (-6.0206)) < tolerance)
        #expect(abs(recorder.averagePower(forChannel: 0) - (-9.0309)) < tolerance)
        #expect(abs(recorder.peakPower(forChannel: 1) - (-12.0412)) < tolerance)
        #expect(abs(recorder.averagePower(forChannel: 1) - (-15.0515)) < tolerance)
        #expect(recorder.peakPower(forChannel: 2) == -160)

        // No new audio: the readings hold instead of dropping to silence.
        recorder.updateMeters()
        #expect(abs(recorder.peakPower(forChannel: 0) - (-6.0206)) < tolerance)
        recorder.stop()
        recorder.updateMeters()
        #expect(recorder.averagePower(forChannel: 0) == -160)
    }

    @Test func deleteRemovesTheFileAndOnlyWhenStopped() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 10_000))
        let path = dir.appendingPathComponent("gone.flac").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        try recorder.record()
        _ = RecorderFixture.render(engine, frames: 10 * Self.block)
        #expect(
            throws: RecorderError.notAllowed(
                path: path, reason: "it is still open; call stop() before deleteRecording()")
        ) { try recorder.deleteRecording() }
        recorder.pause()
        #expect(throws: RecorderError.self) { try recorder.deleteRecording() }
        recorder.stop()
        #expect(FileManager.default.fileExists(atPath: path))
        try recorder.deleteRecording()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(throws: RecorderError.file(.fileNotFound(path: path))) { try recorder.deleteRecording() }
    }

    @Test func recordingAgainAfterStopStartsANewTake() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("again.wav").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        let log = RecorderEventLog(recorder)
        try recorder.record()
        _ = RecorderFixture.render(engine, frames: 80 * Self.block)
        recorder.stop()
        #expect(recorder.currentTime == 0)
        try recorder.record()
        let second = RecorderFixture.render(engine, frames: 20 * Self.block)
        recorder.stop()
        #expect(log.finishes == [true, true])
        #expect(try AudioFileReader.load(path: path).channels == second)
    }

    @Test func aFinishedHandlerCanStartTheNextTake() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("chain.wav").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        let restarted = Mutex(false)
        let finishes = Mutex(0)
        recorder.setEventHandler { [weak recorder] event in
            guard case .finished = event else { return }
            // The first end (on the disk thread) starts a second take from inside the handler.
            if finishes.withLock({
                $0 += 1; return $0
            }) == 1 {
                try? recorder?.record()
                restarted.withLock { $0 = true }
            }
        }
        try recorder.record(forDuration: 0.1)
        _ = RecorderFixture.render(engine, frames: 20 * Self.block)
        let deadline = Date().addingTimeInterval(10)
        while !restarted.withLock({ $0 }), Date() < deadline { usleep(2_000) }
        #expect(recorder.isRecording)
        let second = RecorderFixture.render(engine, frames: 20 * Self.block)
        recorder.stop()
        #expect(finishes.withLock { $0 } == 2)
        #expect(try AudioFileReader.load(path: path).channels == second)
    }

    @Test func errorsAreClearAndNameTheFile() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 1_000))

        func message(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "no error"
            } catch {
                return "\(error)"
            }
        }

        let badFormat = dir.appendingPathComponent("take.xyz").path
        let formatMessage = message { _ = try Recorder(engine: engine, node: "main", path: badFormat) }
        #expect(formatMessage.contains("'\(badFormat)'") && formatMessage.contains(".wav"), "\(formatMessage)")

        // A folder that does not exist is refused when the recorder is made, not at `record`.
        let missingDirectory = dir.appendingPathComponent("no/such/dir/take.wav").path
        let createMessage = message { _ = try Recorder(engine: engine, node: "main", path: missingDirectory) }
        #expect(
            createMessage.contains("'\(missingDirectory)'") && createMessage.contains("does not exist"),
            "\(createMessage)")

        // A format the extension contradicts (ADTS AAC into a .m4a) is refused; ALAC in .m4a is not.
        let m4a = dir.appendingPathComponent("take.m4a").path
        let mismatch = message {
            _ = try Recorder(engine: engine, node: "main", path: m4a, settings: RecorderSettings(format: .aacADTS))
        }
        #expect(mismatch.contains("'\(m4a)'") && mismatch.contains("does not match the extension"), "\(mismatch)")
        _ = try Recorder(engine: engine, node: "main", path: m4a, settings: RecorderSettings(format: .alacM4A))

        // An encoding the format cannot store is refused when the recorder is made, not at `record`.
        let floatFlac = dir.appendingPathComponent("take.flac").path
        let flacMessage = message {
            _ = try Recorder(
                engine: engine, node: "main", path: floatFlac, settings: RecorderSettings(encoding: .float32))
        }
        #expect(
            flacMessage.contains("'\(floatFlac)'") && flacMessage.contains("FLAC stores integers only"),
            "\(flacMessage)")

        let good = dir.appendingPathComponent("take.wav").path
        let nodeMessage = message { _ = try Recorder(engine: engine, node: "nowhere", path: good) }
        #expect(nodeMessage.contains("'\(good)'") && nodeMessage.contains("'nowhere'"), "\(nodeMessage)")
        let busMessage = message { _ = try Recorder(engine: engine, node: "output", path: good) }
        #expect(busMessage.contains("'\(good)'") && busMessage.contains("no output bus"), "\(busMessage)")
        let durationMessage = message {
            try Recorder(engine: engine, node: "main", path: good).record(forDuration: -1)
        }
        #expect(durationMessage.contains("'\(good)'") && durationMessage.contains("duration"), "\(durationMessage)")
        #expect(!FileManager.default.fileExists(atPath: good))  // nothing was created by refused requests
    }

    @Test func tapOverflowIsReportedAsLostFrames() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("overflow.wav").path
        let recorder = try Recorder(engine: engine, node: "main", path: path)
        engine.setEventHandler { [recorder] event in recorder.handle(event) }
        let log = RecorderEventLog(recorder)
        try recorder.record()
        // Five seconds without a poll: the tap's one-second ring overflows.
        _ = OfflineRenderer(engine: engine, pollInterval: 1 << 30).render(frameCount: 240_000, hostBlockFrames: 256)
        recorder.stop()
        let lost = log.lostFrames(.tapOverflow)
        let file = try AudioFileReader.load(path: path)
        #expect(lost > 0)
        // Every frame is in the file or reported lost, except the partial block pending at stop().
        #expect((240_000 - Self.block)...240_000 ~= file.frameCount + lost)
        #expect(log.errors.allSatisfy { $0.description.contains("'\(path)'") && $0.description.contains("lost") })
        #expect(log.finishes == [true])
    }

    @Test func aDiskThatFallsBehindDropsAndReportsInsteadOfGrowing() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 30_000))
        let path = dir.appendingPathComponent("slow.wav").path
        // Backlog of 0.1 s = 4800 frames = 18 whole 256-frame blocks.
        let recorder = try Recorder(
            engine: engine, node: "main", path: path, settings: RecorderSettings(maximumBacklog: 0.1))
        let log = RecorderEventLog(recorder)
        try recorder.prepareToRecord()
        recorder.holdWriterForTesting(true)
        try recorder.record()
        let rendered = RecorderFixture.render(engine, frames: 200 * Self.block)
        #expect(log.lostFrames(.writerBehind) > 0)  // reported while still behind, not only at the end
        recorder.holdWriterForTesting(false)
        recorder.stop()

        let kept = 18 * Self.block
        #expect(recorder.recordedFrameCount == kept)
        #expect(log.lostFrames(.writerBehind) == 200 * Self.block - kept)
        #expect(log.all.last == .finished(successfully: true))  // losses are reported before the end
        let file = try AudioFileReader.load(path: path)
        #expect(file.channels == RecorderFixture.slice(rendered, 0..<kept))
        #expect(log.finishes == [true])
    }
}
