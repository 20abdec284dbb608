// Control side, before anything is opened. On a machine where PipeWire serves audio, `soundstage run`
// without `pw-jack` finds no jackd; starting one would hide it from PipeWire (and, with a sound card,
// fight PipeWire for it). So it says so and runs itself again through PipeWire's libjack.
import ArgumentParser
import Foundation
import JackHost

extension RunCommand {
    /// The marker that stops a second redirect.
    static let pipeWireRedirectMarker = "SOUNDSTAGE_VIA_PW_JACK"

    /// When no server was named, this process is on jackd2's libjack and PipeWire's socket exists: runs
    /// this command again under `pw-jack` (never returns). Refuses with the command to type when
    /// `pw-jack` is missing. Otherwise returns.
    func playThroughPipeWireIfItRuns(serverName: String) throws {
        let environment = ProcessInfo.processInfo.environment
        guard server == nil, serverName == "default", JackLibraryKind.current == .jack2,
            environment[Self.pipeWireRedirectMarker] == nil,
            let socket = JackLibraryKind.pipeWireSocket(environment: environment)
        else { return }
        let command = CommandLine.arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ")
        let pwJack = "/usr/bin/pw-jack"
        guard FileManager.default.isExecutableFile(atPath: pwJack) else {
            printError(
                "PipeWire runs here (\(socket)) but no JACK server does, and pw-jack is not installed "
                    + "(apt-get install pipewire-jack). Run: pw-jack \(command)")
            throw ExitCode(1)
        }
        printError("PipeWire runs here (\(socket)): playing through it, as `pw-jack \(command)`.")
        setenv(Self.pipeWireRedirectMarker, "1", 1)
        var argv: [UnsafeMutablePointer<CChar>?] = ([pwJack] + CommandLine.arguments).map { strdup($0) }
        argv.append(nil)
        execv(pwJack, &argv)
        printError("could not run pw-jack: \(String(cString: strerror(errno)))")
        throw ExitCode(1)
    }
}
