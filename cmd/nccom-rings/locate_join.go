package main

import "github.com/nccomring/libnccomring/cmd/nccom-rings/location"

// joinedName is the name topo knows host by: host itself, or the name
// the instances files at paths join it to (location.Join); host when they
// join it to none, with why (the join's own reason: a name two records
// share, a host no file names), for the lookup's "not in the file".
func joinedName(paths []string, host string, topo *location.Topology) (name, why string, err error) {
	if len(paths) == 0 {
		return host, "", nil
	}
	var joins []*location.Instances
	for _, p := range paths {
		in, err := location.ReadInstancesFile(p)
		if err != nil {
			return "", "", err
		}
		joins = append(joins, in)
	}
	j := location.Join(joins, host, func(name string) bool { _, ok := topo.Lookup(name); return ok })
	if j.Name == "" {
		return host, j.Reason, nil
	}
	return j.Name, "", nil
}
