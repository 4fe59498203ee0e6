package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// membersAgree checks Members of a valid obj against encoding/json's
// reading of the same object: the same keys in the same order, each value
// the same JSON.
func membersAgree(t *testing.T, obj []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		t.Fatalf("%q: %v", obj, err)
	}
	var got [][2][]byte
	for k, v := range Members(obj) {
		got = append(got, [2][]byte{k, v})
	}
	if tok != json.Delim('{') {
		if len(got) != 0 {
			t.Fatalf("%q is no object, yet has members %q", obj, got)
		}
		return
	}
	n := 0
	for ; dec.More(); n++ {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			t.Fatalf("%q: key %v, %v", obj, tok, err)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatalf("%q: %v", obj, err)
		}
		if n >= len(got) {
			t.Fatalf("%q: member %d (%q) missing from %q", obj, n, key, got)
		}
		var gotKey string
		if err := json.Unmarshal(append(append([]byte{'"'}, got[n][0]...), '"'), &gotKey); err != nil || gotKey != key {
			t.Fatalf("%q: key %d is %q (%v), want %q", obj, n, got[n][0], err, key)
		}
		if !bytes.Equal(got[n][1], value) {
			t.Fatalf("%q: value of %q is %q, want %q", obj, key, got[n][1], value)
		}
	}
	if n != len(got) {
		t.Fatalf("%q: %d members, want %d: %q", obj, len(got), n, got)
	}
}

func TestMembers(t *testing.T) {
	for _, c := range []string{
		`{}`, ` { } `, `[]`, `"x"`, `1`, `{"a":1}`, `{ "a" : 1 , "b" : [1, {"c": "}"}] , "d":"x\"y" }`,
		`{"a":{"b":{}},"c":[],"d":null,"e":true,"f":-1.5e3,"g":"\u00e9\\"}`, `{"":""}`, `{"a\"b":1,"a":2,"a":3}`,
	} {
		membersAgree(t, []byte(c))
	}
	for _, l := range sampleLines(t) {
		if Valid(l) {
			membersAgree(t, l)
		}
	}
}

func FuzzMembers(f *testing.F) {
	for _, c := range []string{`{"a":[1,{"b":null}],"c":"\u00e9"}`, `{"x" : -1.5e3 , "y":"}"}`, `[{"a":1}]`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) {
			membersAgree(t, b)
		}
	})
}

// elementsAgree checks Elements of a valid arr against encoding/json's
// reading of the same array: the same elements, each the same JSON.
func elementsAgree(t *testing.T, arr []byte) {
	t.Helper()
	var got [][]byte
	for v := range Elements(arr) {
		got = append(got, v)
	}
	var want []json.RawMessage
	if json.Unmarshal(arr, &want) != nil || want == nil {
		if len(got) != 0 {
			t.Fatalf("%q is no array, yet has elements %q", arr, got)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%q: elements %q, want %q", arr, got, want)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%q: element %d is %q, want %q", arr, i, got[i], want[i])
		}
	}
}

func TestElements(t *testing.T) {
	for _, c := range []string{
		`[]`, ` [ ] `, `{}`, `"x"`, `null`, `[1]`, `[ 1 , "]" , [2, [3]] , {"a":"]"} , null , -1.5e3 , "x\"y" ]`,
		`[[],{},"\u00e9\\",true,false]`,
	} {
		elementsAgree(t, []byte(c))
	}
	for _, l := range sampleLines(t) {
		if Valid(l) {
			elementsAgree(t, l)
			for _, v := range Members(l) {
				elementsAgree(t, v)
			}
		}
	}
}

func FuzzElements(f *testing.F) {
	for _, c := range []string{`[1,{"b":null},"c"]`, `[ -1.5e3 , "]" ]`, `{"a":[1]}`, `[]`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) {
			elementsAgree(t, b)
		}
	})
}
