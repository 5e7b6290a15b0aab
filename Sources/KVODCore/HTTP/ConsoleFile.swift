/// A file of kvod's console, the page `--http` serves at `/` (docs/HTTP.md, "The
/// console"): plain HTML, CSS and JavaScript built into kvod, which call the API
/// with the token the person gives.
public enum ConsoleFile: Equatable, Sendable, CaseIterable {
    case page
    case script
    case style

    /// The file served at `path`, if any.
    public init?(path: String) {
        switch path {
        case "/": self = .page
        case "/console.js": self = .script
        case "/console.css": self = .style
        default: return nil
        }
    }

    public var contentType: String {
        switch self {
        case .page: "text/html; charset=utf-8"
        case .script: "text/javascript; charset=utf-8"
        case .style: "text/css; charset=utf-8"
        }
    }

    /// What every file of the console is sent with: its scripts and styles only from
    /// kvod itself, no frame around it, no Referer with a URL (a watch's carries the
    /// token), no second guess of a content type, no copy kept across versions.
    public static let headers = [
        HTTPHeader("content-security-policy",
                   "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
                   "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        HTTPHeader("x-content-type-options", "nosniff"),
        HTTPHeader("referrer-policy", "no-referrer"),
        HTTPHeader("cache-control", "no-cache"),
    ]
}
