// The systemd units in contrib/systemd (docs/SERVICE.md) pass `systemd-analyze verify` without a
// single warning, as system and as user units, and the engine's command line in them is one that
// `soundstage run` accepts.
import DSPTestSupport
import Foundation
import Testing

/// systemd's unit checker (Debian's `systemd` package, which scripts/setup.sh installs).
enum SystemdAnalyze {
    static let path = "/usr/bin/systemd-analyze"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }
}

@Suite(.requiresTool("systemd-analyze", SystemdAnalyze.isAvailable, "needs systemd-analyze (Debian's systemd)"))
struct ServiceUnitTests {
    static let analyzer = SystemdAnalyze.path
    static let units = Fixtures.root.appendingPathComponent("contrib/systemd")
    /// Where the units expect the installed engine.
    static let installedPath = "/usr/local/bin/soundstage"

    /// The units of `scope` copied into a scratch folder. `verify` insists that every command exists,
    /// so the engine's installed path is pointed at the built executable; nothing else is changed.
    private func staged(_ scope: String, in dir: URL) throws -> [String] {
        let source = Self.units.appendingPathComponent(scope)
        let names = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasSuffix(".service") }
            .sorted()
        #expect(names == ["jackd.service", "soundstage.service"])
        let folder = dir.appendingPathComponent(scope)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try names.map { name in
            let text = try String(contentsOf: source.appendingPathComponent(name), encoding: .utf8)
                .replacingOccurrences(of: Self.installedPath, with: Fixtures.executable)
            return try Fixtures.write(text, to: name, in: folder)
        }
    }

    /// `systemd-analyze verify` exits 0 even after warnings (an unknown key, a value it cannot parse,
    /// which it then ignores), so its whole output must be empty too.
    private func verify(_ paths: [String], user: Bool, runtime: URL) throws {
        let arguments = ["verify", "--man=no"] + (user ? ["--user"] : []) + paths
        // A user manager needs a runtime folder; a container may have none.
        let result = try Fixtures.run(
            Self.analyzer, arguments, environment: ["XDG_RUNTIME_DIR": runtime.path, "PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect((result.stdout + result.stderr).isEmpty, "systemd-analyze warned:\n\(result.stdout)\(result.stderr)")
    }

    @Test func systemAndUserUnitsVerifyCleanly() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let runtime = dir.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o700)
        try verify(try staged("system", in: dir), user: false, runtime: runtime)
        try verify(try staged("user", in: dir), user: true, runtime: runtime)
    }

    /// The verifier does not know our keys are the ones the document promises: check them by name.
    @Test func unitsCarryTheLimitsRestartPolicyAndReload() throws {
        for scope in ["system", "user"] {
            for name in ["jackd", "soundstage"] {
                let text = try String(
                    contentsOf: Self.units.appendingPathComponent("\(scope)/\(name).service"), encoding: .utf8)
                let lines = Set(text.split(separator: "\n").map(String.init))
                #expect(lines.contains("Restart=on-failure"), "\(scope)/\(name)")
                #expect(lines.contains("StandardError=journal"), "\(scope)/\(name)")
                #expect(lines.contains("SyslogIdentifier=\(name)"), "\(scope)/\(name)")
                if scope == "system" {
                    #expect(
                        lines.contains("LimitRTPRIO=95") && lines.contains("LimitMEMLOCK=infinity"), "\(scope)/\(name)")
                    #expect(lines.contains("SupplementaryGroups=audio"), "\(scope)/\(name)")
                }
                if name == "soundstage" {
                    #expect(lines.contains("ExecReload=/bin/kill -HUP $MAINPID"), "\(scope)/\(name)")
                }
            }
        }
        let dropIn = try String(
            contentsOf: Self.units.appendingPathComponent("system/user@.service.d/realtime.conf"), encoding: .utf8)
        #expect(dropIn.contains("LimitRTPRIO=95") && dropIn.contains("LimitMEMLOCK=infinity"))
    }

    /// The units' `soundstage run …` options exist: with a patch that is not there the engine stops at
    /// the patch (exit 1), not at an unknown option (the argument parser's exit 64).
    @Test(
        .requiresTool(
            "the soundstage executable", FileManager.default.isExecutableFile(atPath: Fixtures.executable),
            "needs the built soundstage"))
    func theUnitsCommandLineIsAccepted() throws {
        for scope in ["system", "user"] {
            let text = try String(
                contentsOf: Self.units.appendingPathComponent("\(scope)/soundstage.service"), encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
            var words = line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
            #expect(words.first == Self.installedPath)
            words.removeFirst()
            #expect(words.count > 2 && words[0] == "run")
            words[1] = "/nonexistent/soundstage-unit-check/patch.yaml"
            // The unit's folders exist where it is installed; here a folder that exists stands in.
            for i in words.indices.dropFirst() where words[i - 1] == "--file-root" { words[i] = NSTemporaryDirectory() }
            let result = try Fixtures.run(Fixtures.executable, words, timeout: 30)
            #expect(result.status == 1, "\(scope): \(result.stderr)")
            #expect(result.stderr.contains("patch.yaml"), "\(scope): \(result.stderr)")
        }
    }
}
