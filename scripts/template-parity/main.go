package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

// Runs each case of a JSON list [{"t": template, "d": data}] through Go's text/template with sprig (as
// the reference runs injection templates) and prints the list of outputs as JSON ("ERR: ..." for an
// error). isset, contains and indent are the reference's meanings, written from its documentation.
func main() {
	raw, _ := os.ReadFile(os.Args[1])
	var cases []struct {
		T string         `json:"t"`
		D map[string]any `json:"d"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	funcs := template.FuncMap{
		"isset": func(m map[string]any, k string) bool { _, ok := m[k]; return ok },
		"contains": func(needle, haystack string) bool { return strings.Contains(haystack, needle) },
		"indent": func(n int, s string) string {
			lines := strings.Split(s, "\n")
			for i := range lines {
				if i > 0 {
					lines[i] = strings.Repeat(" ", n) + lines[i]
				}
			}
			return strings.Join(lines, "\n")
		},
	}
	out := []string{}
	for _, c := range cases {
		t, err := template.New("t").Funcs(sprig.TxtFuncMap()).Funcs(funcs).Parse(c.T)
		if err != nil {
			out = append(out, "ERR: "+err.Error())
			continue
		}
		var b bytes.Buffer
		if err := t.Execute(&b, c.D); err != nil {
			out = append(out, "ERR: "+err.Error())
			continue
		}
		out = append(out, b.String())
	}
	j, _ := json.Marshal(out)
	fmt.Println(string(j))
}
