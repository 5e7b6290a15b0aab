#if canImport(Glibc)
import Glibc
#endif
import KVOEngine
import Logging

/// kvod's log handler: one line per message on stderr, in swift-log's
/// `StreamLogHandler` layout (`<time> <level> <label>: [<source>] <message>`).
///
/// Under systemd (``JournalStream``) every line instead starts with its
/// priority, `<N>`, which journald takes off and files the line under
/// (sd-daemon(3)), so `journalctl -p warning` finds kvod's warnings; the
/// timestamp is left out there, since the journal records its own. A message
/// is always one line: control characters in it, newlines included, are
/// written as escapes (``LogText``), so nothing in a message can forge a line.
///
/// A message goes out in one `write(2)`, so messages from different threads
/// do not mix within a line (a pipe takes up to `PIPE_BUF` bytes whole).
struct StandardErrorLogHandler: LogHandler {
    enum Format: Sendable {
        /// Timestamped lines, for a terminal or a file.
        case plain
        /// Lines prefixed with their journald priority, without a timestamp.
        case journal
    }

    let label: String
    let format: Format
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, format: Format, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.format = format
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        // One message, one line: a control character a client slipped into a
        // name (a newline and a fake timestamp) is written as an escape.
        let message = LogText.escapingControlCharacters(
            "\(prettyMetadata(for: event)) [\(event.source)] \(event.message)")
        var text = "\(event.level) \(label):\(message)"
        switch format {
        case .plain:
            text = Self.timestamp() + " " + text + "\n"
        case .journal:
            let prefix = "<\(event.level.journalPriority)>"
            text = prefix + text + "\n"
        }
        Self.writeToStandardError(text)
    }

    /// The handler's metadata, then the provider's, then the message's own
    /// and its error, as `StreamLogHandler` merges them; "" when there is none.
    private func prettyMetadata(for event: LogEvent) -> String {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        guard !merged.isEmpty else { return "" }
        return " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
    }

    /// Local time, as `StreamLogHandler` writes it (`2025-01-31T12:00:00+0100`).
    private static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes all of `text`, retrying after signals; a line that cannot be
    /// written at all is dropped: logging must never stop the daemon.
    private static func writeToStandardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
