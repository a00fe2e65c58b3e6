/// One browse for `_hap._tcp.local` as a value-type state machine: what to send when, and what
/// the responses have told so far. It knows no sockets and reads no clock: the channel handler
/// that drives it (``BrowseHandler``) passes the time in and carries out what it answers.
///
/// The first query goes out at ``start(at:)``; it is sent again at a third and at two thirds of
/// the duration; services whose SRV or TXT record, or hosts whose address, did not come with the
/// answers are asked for by name (``FollowUpSchedule``). The round is over at the deadline.
struct DiscoveryRound {
    /// What the driver does after a call: send these queries (wire format, in order), then call
    /// ``advance(at:)`` again at `wake`, or, when `wake` is nil, end the round.
    struct Step: Equatable {
        var queries: [[UInt8]]
        var wake: ContinuousClock.Instant?
    }

    /// The shortest wait between two passes, so a follow-up that is just due does not spin.
    static let minimumWait: Duration = .milliseconds(5)

    private let duration: Duration
    private let queryID: UInt16
    private var deadline: ContinuousClock.Instant?
    private var resends: [ContinuousClock.Instant] = []
    private var collector = DiscoveryCollector()
    private var followUps = FollowUpSchedule()

    /// A round that browses for `duration`; its queries carry `queryID` (responders echo it in
    /// legacy-unicast answers).
    init(duration: Duration, queryID: UInt16 = .random(in: 1...UInt16.max)) {
        self.duration = duration
        self.queryID = queryID
    }

    /// The PTR query for `_hap._tcp.local` and `_hap._udp.local`, QU bit set.
    var browseQuery: [UInt8] {
        DNSMessage.query(id: queryID, [DNSQuestion(name: Discovery.serviceType, type: .ptr, unicastResponse: true),
                                       DNSQuestion(name: Discovery.coapServiceType, type: .ptr, unicastResponse: true)]).encodedQuery()
    }

    /// Whether the round has ended (its deadline passed).
    private(set) var isFinished = false

    /// Starts the round at `now`: the browse query (sent even if the duration is zero), and when
    /// to come back.
    mutating func start(at now: ContinuousClock.Instant) -> Step {
        deadline = now + max(duration, .zero)
        resends = [now + duration / 3, now + duration * 2 / 3]
        var step = advance(at: now)
        step.queries.insert(browseQuery, at: 0)
        return step
    }

    /// Takes in a decoded response (a query, or anything before the start, is ignored).
    mutating func receive(_ message: DNSMessage) {
        guard message.isResponse, deadline != nil, !isFinished else { return }
        collector.add(message)
    }

    /// A pass at `now`: the resends and follow-up questions that are due, and the next wake-up
    /// (nil once the deadline has passed).
    mutating func advance(at now: ContinuousClock.Instant) -> Step {
        guard let deadline, !isFinished else { return Step(queries: [], wake: nil) }
        guard now < deadline else {
            isFinished = true
            return Step(queries: [], wake: nil)
        }
        var queries: [[UInt8]] = []
        if let next = resends.first, now >= next {
            resends.removeFirst()
            queries.append(browseQuery)
        }
        for packet in followUps.due(collector.missingQuestions(), at: now) {
            queries.append(DNSMessage.query(id: queryID, packet).encodedQuery())
        }
        var wake = deadline
        if let next = resends.first { wake = min(wake, next) }
        if let next = followUps.nextCheck { wake = min(wake, next) }
        return Step(queries: queries, wake: max(wake, now + Self.minimumWait))
    }

    /// The accessories found so far, sorted by name.
    func accessories() -> [DiscoveredAccessory] {
        collector.accessories()
    }
}
