// The web view in a real browser: `soundstage run --http-port` on a private JACK server, the page opened in
// Debian's headless chromium by Selenium (Python/web_view_check.py, through Debian's chromedriver). The
// script checks that the patch's nodes are drawn, that the play button plays (read back over OSC), that
// meters move while audio plays and that a source moved over OSC moves on the top view, and saves a
// screenshot. Skipped, with the reason, when chromium, chromedriver or the Python packages are missing;
// a failure instead under scripts/test.sh (SOUNDSTAGE_REQUIRE_TOOLS=1).
import AudioFiles
import Foundation
import Testing

/// Debian's chromium and chromedriver, and a python3 with selenium, websockets and python-osc
/// (scripts/python-web.sh makes a virtual environment for them once).
enum WebBrowserTools {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The python3 with python-osc, websockets and selenium (the OSCQuery tests' interpreter).
    static var python: (path: String?, reason: String) { PythonWeb.interpreter }

    static var areAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: chromium)
            && FileManager.default.isExecutableFile(atPath: chromedriver) && python.path != nil
    }
}

extension OSCExternalSerialSuites {
    @Suite struct WebViewBrowserTests {}
}

extension OSCExternalSerialSuites.WebViewBrowserTests {
    /// A stopped player `deck` through a reverb; an audioplayer `src` playing in the environment `env`,
    /// 2 m left and 3 m ahead of the listener. Both play `tone.wav`.
    private static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        buffers:
          - { name: tone, file: tone.wav }
        nodes:
          - { name: deck, kind: player, params: { buffer: tone, loop: true, volume: 0.8 } }
          - { name: verb, kind: reverb, params: { wetDryMix: 30 } }
          - name: src
            kind: audioplayer
            params: { file: tone.wav, numberOfLoops: -1, playing: true, positionX: -2, positionZ: -3 }
          - { name: env, kind: environment }
        connections:
          - { from: deck, to: verb }
          - { from: verb, to: main }
          - { from: src, to: env }
          - { from: env, to: main }

        """

    /// One second of a mono 440 Hz tone whose level swells and fades four times a second (between −20
    /// and −6 dBFS), so the peak of successive 50 ms meter windows differs while it plays.
    private static func tone() -> [Float] {
        (0..<48_000).map { i in
            let t = Double(i) / 48_000
            let envelope = 0.3 + 0.2 * sin(2 * Double.pi * 4 * t)
            return Float(envelope * sin(2 * Double.pi * 440 * t))
        }
    }

    @Test(
        .requiresTool(
            "chromium, chromium-driver and Selenium", WebBrowserTools.areAvailable,
            Comment(
                rawValue: "needs chromium and chromium-driver (Debian) and selenium (PyPI): "
                    + WebBrowserTools.python.reason)),
        .needsJackAndSoundstage,
        .timeLimit(.minutes(4)))
    func pageShowsTheGraphPlaysMetersAndMovesSources() throws {
        let python = try #require(WebBrowserTools.python.path, Comment(rawValue: WebBrowserTools.python.reason))
        let server = try DummyJackServer()
        let folder = NSTemporaryDirectory() + "osct-webview-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try AudioFileWriter.write(AudioData(channels: [Self.tone()], sampleRate: 48_000), to: folder + "/tone.wav")
        let patchPath = folder + "/web.yaml"
        try Self.patch.write(toFile: patchPath, atomically: true, encoding: .utf8)

        let httpPort = try LoopbackUDP.freePort()
        let run = try SoundstageRun(
            patch: patchPath, server: server, clientName: "ss_web",
            extraArguments: ["--connect", "--http-port", String(httpPort)])
        let printed = run.child.waitForOutput(containing: "web view: http://", timeout: 10)
        #expect(printed?.contains("web view: http://127.0.0.1:\(httpPort)/view") == true, "\(run.child.output)")

        let screenshot = folder + "/web-view.png"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/web_view_check.py").path
        let result = ChildProcess.run(
            python, [script, String(httpPort), String(run.port), screenshot], timeout: 180)
        #expect(result.status == 0, Comment(rawValue: "web_view_check.py:\n\(result.output)"))
        #expect(result.output.hasSuffix("OK\n"), Comment(rawValue: result.output))
        #expect(FileManager.default.fileExists(atPath: screenshot), "no screenshot")
        if let copy = ProcessInfo.processInfo.environment["SOUNDSTAGE_WEB_VIEW_SCREENSHOT"] {
            try? FileManager.default.removeItem(atPath: copy)
            try? FileManager.default.copyItem(atPath: screenshot, toPath: copy)
        }
        print(result.output)
        #expect(run.child.isRunning, Comment(rawValue: run.child.output.suffix(2000).description))
    }
}
