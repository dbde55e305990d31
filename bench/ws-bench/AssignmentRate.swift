import PushHub

/// Assignments per second on one core: a running, non-sticky experiment, distinct units.
enum AssignmentRate {
    static func run(count: Int, traffic: Double) -> (perSecond: Double, inExperiment: Int) {
        let json = try! JSONReader.parse(
            #"{"key":"bench","salt":"2019-02","status":"running","traffic":\#(traffic),"variants":[{"key":"A","weight":1},{"key":"B","weight":1}]}"#
        )
        let experiment = try! Experiment(key: "bench", json: json)
        let units = (0..<count).map { "user-\($0)" }
        var assigned = 0
        let start = MonotonicClock.now()
        for unit in units where Assignment.assign(experiment, unit: unit, client: nil, view: nil).variant != nil {
            assigned += 1
        }
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        return (Double(count) / seconds, assigned)
    }
}
