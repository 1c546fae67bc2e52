// p4sim/tests/stf/value_set.p4 with its value sets left empty, for BMv2: the STF that fills
// them (pvs_add) runs on p4sim only, since BMv2 1.15.5's simple_switch aborts on the CLI's
// pvs_add (parser.cpp: `new_v.size() == width` fails); P4Runtime writes are tested in
// test_runtime_p4runtime.py.
#include <core.p4>
#include <v1model.p4>
#include "../stf/value_set.p4"
