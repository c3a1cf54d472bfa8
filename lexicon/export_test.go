package lexicon

// Data is the embedded file, for the test that checks its checksum.
var Data = data
