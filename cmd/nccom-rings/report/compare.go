package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"

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
	// PredictBusBandwidth is the hook for a simulation of the rings (a
	// later issue): the bus bandwidth, in GB/s, it predicts for a job.
	// Nil, as today: the page has no bandwidth column and the data block's
	// "predictedBusBandwidth" is null; no figure is made up.
	PredictBusBandwidth func(*score.Job) (gbps float64, err error)
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

// CompareData is the JSON block of a comparison page (id "compare"), what
// a script draws each job and the change from.
type CompareData struct {
	A Side `json:"a"`
	B Side `json:"b"`
	// Score and Changes are nil when either job has no rings.
	Score   *score.ScoreChange `json:"score"`
	Changes []score.Change     `json:"changes"`
	Same    bool               `json:"same"`
	// PredictedBusBandwidth is [A, B] in GB/s from Compare's hook; null
	// while there is none.
	PredictedBusBandwidth []float64 `json:"predictedBusBandwidth"`
}

// Side is one job of a comparison.
type Side struct {
	Dir string `json:"dir"`
	// Data is the job's blob, as a one-job page holds it (id "data");
	// null when the job has no rings, and Error says why.
	Data  *Data  `json:"data"`
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
		if p := c.PredictBusBandwidth; p != nil {
			ga, errA := p(c.A.Job)
			gb, errB := p(c.B.Job)
			if errA == nil && errB == nil {
				cmp.PredictedBusBandwidth = []float64{ga, gb}
			}
		}
	}
	v := &compareView{Compared: compared, Data: cmp}
	for i, in := range []Input{a, b} {
		pv, err := view(visibleInput(in))
		if err != nil {
			return err
		}
		side := Side{Dir: pv.Dir, Data: pv.Data, Error: pv.JobError}
		if i == 0 {
			v.A, cmp.A = pv, side
		} else {
			v.B, cmp.B = pv, side
		}
	}
	if cmp.Score != nil {
		v.Levels = levelRows(*cmp.Score)
	}
	top := &pageView{Input: Input{Dir: v.A.Dir + " -> " + v.B.Dir}, CSP: v.A.CSP, Compare: v}
	return page.Execute(w, top)
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
		switch {
		case l.A == nil || l.B == nil:
		case l.A.Fewest == l.B.Fewest:
			row.Fewest = fmt.Sprint(l.A.Fewest)
		default:
			row.Fewest = fmt.Sprintf("%d -> %d", l.A.Fewest, l.B.Fewest)
		}
		if l.A != nil && l.B != nil {
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
