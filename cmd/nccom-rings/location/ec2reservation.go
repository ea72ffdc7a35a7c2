package location

// ParseEC2Reservation reads the JSON of EC2's
// DescribeCapacityReservationTopology ("aws ec2
// describe-capacity-reservation-topology": {"CapacityReservations":
// [...], "NextToken": ...}, pages one after another, or an array of
// pages) and returns where each Capacity Reservation sits, before any
// instance is launched in it: its NetworkNodes, top layer first (1 to 3
// layers), as ParseEC2 gives an instance's. The hosts are the
// reservations' ids (cr-...); a reservation's CapacityBlockId (cb-...,
// UltraServer reservations) finds it too. Only CapacityReservationId,
// CapacityBlockId and NetworkNodes are read; State, InstanceType,
// GroupName, AvailabilityZone and AvailabilityZoneId are skipped. A
// reservation whose NetworkNodes is absent, null or empty (an instance
// type without topology, a state other than active or pending) is kept
// without a location. Errors and limits are ParseEC2's.
func ParseEC2Reservation(file string, data []byte) (*Topology, error) {
	return parseEC2(file, data, &reservationTopology)
}

var reservationTopology = ec2Kind{
	source: "ec2-reservation", api: "DescribeCapacityReservationTopology", list: "CapacityReservations",
	id: "CapacityReservationId", alias: "CapacityBlockId", what: "Capacity Reservation",
	none: "EC2 gave no NetworkNodes for it (an instance type without topology, or a state other than active or pending)",
}
