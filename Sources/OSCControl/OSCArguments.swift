// OSC thread. Reading a request's arguments by position, with /error 61 for anything unexpected.

/// A cursor over a request's arguments.
struct OSCArguments {
    let address: String
    let values: [OSCArgument]
    private(set) var index = 0

    init(_ request: OSCRequest) {
        address = request.address
        values = request.arguments
    }

    var isAtEnd: Bool { index >= values.count }
    var remaining: Int { values.count - index }

    func failure(_ text: String) -> OSCFailure {
        OSCFailure(.badArguments, "\(OSCText.sanitized(address)): \(text)")
    }

    /// A string (s or S).
    mutating func string(_ what: String) throws(OSCFailure) -> String {
        guard index < values.count else { throw failure("missing \(what) (s)") }
        guard let text = values[index].stringValue else {
            throw failure("\(what) must be a string (s), not \(values[index].typeTag)")
        }
        index += 1
        return text
    }

    mutating func optionalString(_ what: String) throws(OSCFailure) -> String? {
        isAtEnd ? nil : try string(what)
    }

    /// A whole number (i, h, or a whole f/d).
    mutating func integer(_ what: String) throws(OSCFailure) -> Int64 {
        guard index < values.count else { throw failure("missing \(what) (i or h)") }
        guard let value = values[index].integerValue else {
            throw failure("\(what) must be a whole number (i or h), not \(values[index])")
        }
        index += 1
        return value
    }

    mutating func optionalInteger(_ what: String) throws(OSCFailure) -> Int64? {
        isAtEnd ? nil : try integer(what)
    }

    /// A number (f, d, i or h).
    mutating func double(_ what: String) throws(OSCFailure) -> Double {
        guard index < values.count else { throw failure("missing \(what) (f)") }
        guard let value = values[index].doubleValue, value.isFinite else {
            throw failure("\(what) must be a finite number (f, d, i or h), not \(values[index])")
        }
        index += 1
        return value
    }

    /// T/F or 1/0.
    mutating func flag(_ what: String) throws(OSCFailure) -> Bool {
        guard index < values.count else { throw failure("missing \(what) (i 1|0 or T/F)") }
        guard let value = values[index].boolValue else {
            throw failure("\(what) must be 1/0 or T/F, not \(values[index])")
        }
        index += 1
        return value
    }

    /// The next argument, whatever its type.
    mutating func any(_ what: String) throws(OSCFailure) -> OSCArgument {
        guard index < values.count else { throw failure("missing \(what)") }
        index += 1
        return values[index - 1]
    }

    /// Refuses extra arguments.
    func end() throws(OSCFailure) {
        guard isAtEnd else {
            throw failure("unexpected extra argument\(remaining == 1 ? "" : "s") starting at \(values[index])")
        }
    }
}
