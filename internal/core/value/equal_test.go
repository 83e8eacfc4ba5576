package value

import (
	"math/big"
	"testing"
)

func TestValueEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		want bool
	}{
		{map[*big.Int]int{big.NewInt(1): 2, big.NewInt(3): 4}, map[*big.Int]int{big.NewInt(3): 4, big.NewInt(1): 2}, true},
		{map[*big.Int]int{big.NewInt(1): 2}, map[*big.Int]int{big.NewInt(1): 3}, false},
		{map[*big.Float]string{big.NewFloat(1.5): "x"}, map[*big.Float]string{big.NewFloat(1.5): "x"}, true},
		{[]*big.Int{big.NewInt(7)}, []*big.Int{big.NewInt(7)}, true},
		{[]int{1, 2}, []int{2, 1}, false},
		{map[string]int{}, nil, true},
		{[]byte{1}, []byte{1}, true},
		{[]byte{1}, []byte{2}, false},
		{int64(5), int64(5), true},
		{int64(5), int64(6), false},
	} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
