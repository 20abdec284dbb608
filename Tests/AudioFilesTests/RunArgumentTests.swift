// `soundstage run` refuses bad arguments before it starts anything: a usage error (exit 64) that names
// the argument and what is wrong with it.
import Foundation
import Testing

@Suite(.enabled(if: SoundstageTool.isAvailable, "soundstage executable not built"))
struct RunArgumentTests {
    @Test func badArgumentsAreRefusedByName() throws {
        let cases: [([String], String)] = [
            (["--http-allow-host", "engine.test:80"], "--http-allow-host 'engine.test:80' is not a host name"),
            (["--http-allow-host", ""], "--http-allow-host '' is not a host name"),
            (["--http-allow-host", "http://engine.test"], "is not a host name"),
            (["--name", String(repeating: "a", count: 64)], "is longer than 63 bytes"),
            (["--name", "a:b"], "must not contain ':'"),
            (["--name", ""], "the client name is empty"),
            (["--http-port", "70000"], "--http-port must be 0…65535")
        ]
        for (arguments, message) in cases {
            let result = try SoundstageTool.run(["run", "--no-start-server", "--duration", "1"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
