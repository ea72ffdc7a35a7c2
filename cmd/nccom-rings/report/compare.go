package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/internal/quote"
)

// Compare is what a page comparing two jobs shows (nccom-rings report
// DIR_A DIR_B): each job as Write takes it, side by side, and between
// them the change of score (score.CompareScores: the crossings per ring
// of each location level and the NIC-index mismatches) and what differs
// (score.Diff, the lines diff prints). Neither is computed twice: the
// page calls those two functions on the jobs it is handed.
type Compare struct {
	A, B Input
	// PredictBusBandwidth is a model's bus bandwidth of a job's rings, in
	// Gbit/s (nccom-rings simulate's unit, busbw_gbps), nil when the page
	// has none (NoPrediction says why). Predicted says what the figure is
	// (collective, algorithm, message size, oversubscription) and
	// Assumptions the model's: the page shows both next to the figures,
	// for a figure without them cannot be read. No figure is made up: when
	// the hook fails for either job the page says so and shows neither.
	PredictBusBandwidth func(*score.Job) (gbps float64, err error)
	Predicted           string
	Assumptions         []string
	// NoPrediction is the page's text where there is no hook: "not
	// available (SimGrid engine not built: ...)"; "" says nothing.
	NoPrediction string
}

//go:embed compare.html
var compareText string

func init() {
	template.Must(page.New("compare").Parse(compareText))
}

// compareView is what compare.html reads: each side's one-job view, and
// the comparison when both jobs have rings.
type compareView struct {
	A, B *pageView
	// Compared says both jobs have rings: Score, Changes and Same are set.
	Compared bool
	Data     *CompareData
	Levels   []levelRow
	// Assumptions are the model's behind Data.PredictedBusBandwidth.
	Assumptions []string
}

// levelRow is one location level in the page's table of crossings.
type levelRow struct {
	Level int
	// A and B are the crossings per ring (score.Crossings.PerRing), Change
	// the change of the most of any channel ("-4").
	A, B, Change string
	Fewest       string // "2", or "2 -> 3"
	Worse        bool   // B crosses more than A somewhere
}

// CompareData is the JSON block of a comparison page (id "compare"): the
// change from A to B. Each job's own blob, what page.js draws it from, is
// the block "a-data" or "b-data" (Data), absent when the job has no rings.
type CompareData struct {
	A Side `json:"a"`
	B Side `json:"b"`
	// Score and Changes are nil when either job has no rings.
	Score   *score.ScoreChange `json:"score"`
	Changes []score.Change     `json:"changes"`
	Same    bool               `json:"same"`
	// PredictedBusBandwidth is [A, B] in Gbit/s from Compare's hook; null
	// while there is none. Prediction is what the figures are, or why
	// there are none ("" neither asked for nor refused).
	PredictedBusBandwidth []float64 `json:"predictedBusBandwidth"`
	Prediction            string    `json:"prediction"`
}

// Side is one job of a comparison: its directory, and why it has no
// rings (its blob absent) when it has none.
type Side struct {
	Dir   string `json:"dir"`
	Error string `json:"error,omitempty"`
}

// WriteCompare writes c's page to w. With Redact on both sides, one
// Redactor serves both jobs: a host keeps its token across the page.
func WriteCompare(w io.Writer, c Compare) error {
	a, b := c.A, c.B
	for _, in := range []Input{a, b} {
		if err := checkInput(in); err != nil {
			return err
		}
	}
	cmp := &CompareData{}
	compared := a.Job != nil && b.Job != nil
	if a.Redact || b.Redact {
		r := NewRedactor(a.Job)
		r.Learn(b.Job)
		a, b = r.Input(a), r.Input(b)
		a.Dir, b.Dir = "DIR_A", "DIR_B"
	}
	if compared {
		change := score.CompareScores(a.Score, b.Score)
		cmp.Score = &change
		// Of the redacted jobs on a redacted page: one Redactor gave
		// both one token per name, so they differ where the dumps do,
		// and every name in a change's text is a token.
		cmp.Changes = visibleChanges(score.Diff(a.Job, b.Job))
		cmp.Same = len(cmp.Changes) == 0
	}
	v := &compareView{Compared: compared, Data: cmp}
	cmp.PredictedBusBandwidth, cmp.Prediction, v.Assumptions = predict(c, compared)
	for i, in := range []Input{a, b} {
		pv, err := view(visibleInput(in))
		if err != nil {
			return err
		}
		pv.Prefix = []string{"a-", "b-"}[i]
		side := Side{Dir: pv.Dir, Error: pv.JobError}
		if i == 0 {
			v.A, cmp.A = pv, side
		} else {
			v.B, cmp.B = pv, side
		}
	}
	if cmp.Score != nil {
		v.Levels = levelRows(*cmp.Score)
	}
	top := &pageView{Input: Input{Dir: v.A.Dir + " -> " + v.B.Dir}, CSP: v.A.CSP, Compare: v,
		Script: v.A.Script, D3: v.A.D3, D3Version: v.A.D3Version, Scripts: v.A.Scored || v.B.Scored}
	return page.Execute(w, top)
}

// predict is the page's predicted bus bandwidth of both jobs (the
// unredacted ones: a model reads locations, not names), with what they
// are and the model's assumptions; or none, and why.
func predict(c Compare, compared bool) (figures []float64, what string, assumptions []string) {
	p := c.PredictBusBandwidth
	switch {
	case !compared:
		return nil, "", nil
	case p == nil:
		return nil, quote.Visible(c.NoPrediction), nil
	}
	var why []string
	for i, j := range []*score.Job{c.A.Job, c.B.Job} {
		g, err := p(j)
		if err != nil {
			text := err.Error()
			if c.A.Redact || c.B.Redact {
				// The model's errors may name hosts or locations.
				text = "the model failed: nccom-rings simulate DIR says why"
			}
			why = append(why, []string{"A", "B"}[i]+": "+text)
			continue
		}
		figures = append(figures, g)
	}
	if len(why) > 0 {
		return nil, quote.Visible("not available (" + strings.Join(why, "; ") + ")"), nil
	}
	for _, a := range c.Assumptions {
		assumptions = append(assumptions, quote.Visible(a))
	}
	return figures, quote.Visible(c.Predicted), assumptions
}

// checkInput is Write's check that in's score is its job's.
func checkInput(in Input) error {
	if in.Job == nil {
		return nil
	}
	if err := in.Job.Check(); err != nil {
		return err
	}
	if in.Score == nil || len(in.Score.Channels) != len(in.Job.Rings) {
		return fmt.Errorf("report: the score is not the job's")
	}
	return nil
}

// visibleChanges is cs with every text, and every rank's list of what
// differs, made visible (quote.Visible, as visibleInput does the rest).
func visibleChanges(cs []score.Change) []score.Change {
	out := make([]score.Change, 0, len(cs))
	for _, c := range cs {
		c.Text = quote.Visible(c.Text)
		var ranks []score.RankView
		for _, r := range c.Ranks {
			what := make([]string, len(r.What))
			for i, w := range r.What {
				what[i] = quote.Visible(w)
			}
			ranks = append(ranks, score.RankView{Rank: r.Rank, What: what})
		}
		c.Ranks = ranks
		out = append(out, c)
	}
	return out
}

// levelRows is the table of crossings per ring, level by level.
func levelRows(ch score.ScoreChange) []levelRow {
	var rows []levelRow
	for _, l := range ch.Levels {
		row := levelRow{Level: l.Level, A: l.A.PerRing(), B: l.B.PerRing(), Change: "-", Fewest: "-"}
		if l.A != nil && l.B != nil {
			row.Fewest = l.Fewest()
			row.Change = signed(l.B.Most - l.A.Most)
			for c := range min(len(l.A.PerChannel), len(l.B.PerChannel)) {
				row.Worse = row.Worse || l.B.PerChannel[c] > l.A.PerChannel[c]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// signed is n with its sign: "+2", "-4", "0".
func signed(n int) string {
	if n > 0 {
		return fmt.Sprintf("+%d", n)
	}
	return fmt.Sprint(n)
}
