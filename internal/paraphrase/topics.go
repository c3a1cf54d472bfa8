package paraphrase

import (
	"maps"
	"slices"
)

// vocabulary is the controlled topic vocabulary of the sets: every fact
// and every paraphrase, task and unrelated question names one. README.md
// in bench/paraphrase lists the same topics with the same relations (a
// test holds the two together).
//
// answeredBy are the other topics on which a fact may answer a question
// of this topic: a diet question is answered by "my favourite dish is
// steak" or "I have coeliac disease", a medication question by "allergic
// to penicillin", "does Liam cook?" by "Liam is a head chef". The
// relation has a direction: "what instrument does Dana play?" is not
// answered by "Dana knits", though "what does Dana do for fun?" is by
// "Dana plays the cello". Nobody who holds a fact on a question's topic,
// or on one that answers it, is asked that question as an unrelated one
// or, names swapped, as another person's (Data.Excluded).
var vocabulary = []struct {
	topic      string
	answeredBy []string
}{
	// Food and drink.
	{"diet", []string{"favourite-food", "food-dislike", "allergy", "health-condition"}},
	{"allergy", []string{"medication"}},
	{"favourite-food", []string{"diet", "cooking"}},
	{"food-dislike", []string{"diet", "allergy"}},
	{"favourite-drink", []string{"diet"}},
	{"cooking", []string{"hobby", "job"}},
	// Health.
	{"medication", []string{"health-condition", "allergy"}},
	{"health-condition", []string{"medication", "allergy", "eyesight"}},
	{"eyesight", nil},
	{"fitness", []string{"sport", "routine", "hobby"}},
	{"sleep", []string{"routine", "work-schedule"}},
	{"blood-type", nil},
	// People.
	{"spouse", []string{"anniversary"}},
	{"anniversary", nil},
	{"children", []string{"grandchildren"}},
	{"grandchildren", nil},
	{"siblings", nil},
	{"parents", nil},
	{"grandparents", nil},
	{"pets", nil},
	{"best-friend", nil},
	// Home.
	{"home-city", []string{"housing"}},
	{"hometown", []string{"home-city"}},
	{"housing", nil},
	// Work and study.
	{"job", []string{"employer"}},
	{"employer", []string{"job"}},
	{"work-schedule", []string{"job", "routine"}},
	{"commute", []string{"vehicle"}},
	{"vehicle", []string{"commute"}},
	{"education", nil},
	{"languages", nil},
	// Tastes and pastimes.
	{"instrument", []string{"hobby"}},
	{"music-taste", []string{"instrument"}},
	{"books", []string{"hobby"}},
	{"film", nil},
	{"tv-show", nil},
	{"podcasts", nil},
	{"games", []string{"hobby"}},
	{"hobby", []string{"garden", "volunteering", "sport", "instrument", "books", "games", "cooking", "fitness"}},
	{"garden", []string{"hobby"}},
	{"volunteering", []string{"hobby"}},
	{"sport", []string{"fitness", "hobby"}},
	{"sports-team", nil},
	// Things.
	{"clothing-size", nil},
	// Travel.
	{"travel-plan", []string{"travel-preference"}},
	{"past-trip", nil},
	{"travel-preference", []string{"phobia"}},
	// Dates, habits and the person.
	{"routine", []string{"fitness", "sleep", "work-schedule"}},
	{"birthday", nil},
	{"communication", []string{"work-schedule"}},
	{"nickname", nil},
	{"phobia", nil},
	{"tattoo", nil},
	{"goal", nil},
	{"favourite-colour", nil},
}

// aliases are the names the held-out set's author gave topics of the
// vocabulary (bench/paraphrase/HELDOUT.md).
var aliases = map[string]string{
	"partner":                  "spouse",
	"pet":                      "pets",
	"films":                    "film",
	"tv-shows":                 "tv-show",
	"communication-preference": "communication",
	"sport-played":             "sport",
}

// Canonical returns the vocabulary's name of a topic (itself, or what an
// alias stands for).
func Canonical(t string) string {
	if c, ok := aliases[t]; ok {
		return c
	}
	return t
}

var topics = func() map[string][]string {
	m := map[string][]string{}
	for _, v := range vocabulary {
		m[v.topic] = slices.Sorted(slices.Values(v.answeredBy))
	}
	return m
}()

// Topics returns the vocabulary, sorted.
func Topics() []string { return slices.Sorted(maps.Keys(topics)) }

// IsTopic reports whether t is in the vocabulary.
func IsTopic(t string) bool {
	_, ok := topics[t]
	return ok
}

// AnsweredBy returns the other topics on which a fact may answer a
// question of topic t, sorted.
func AnsweredBy(t string) []string { return slices.Clone(topics[t]) }
