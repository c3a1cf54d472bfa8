package lexicon

// Data is the embedded file, for the test that checks its checksum.
var Data = data

// NumDefined returns the number of definition entries the header gives.
func NumDefined() int { return nDefined }
