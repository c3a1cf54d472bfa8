package index

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Principal directions of a sample, for the projected first pass (proj.go).
// Their quality decides only how much the first pass prunes, never what a
// search returns: the bounds hold for any basis (see proj.go), so the
// solver favours speed and simplicity over the last digits.

// secondMoment returns C = (1/m)·Σ uᵢuᵢᵀ (dim × dim, full), where the m
// sample directions are the rows of u (m × dim). Uncentred: the first pass
// bounds dot products, so the subspace to keep is the one that holds the
// most of ‖u‖², not of the variance about the mean.
func secondMoment(u []float32, dim int) []float64 {
	c := make([]float64, dim*dim)
	momentAdd(c, u, dim)
	momentFinish(c, dim, len(u)/dim)
	return c
}

// momentAdd adds Σ uᵢuᵢᵀ over the rows of u to the upper triangle of c,
// so that a sample can be added a few rows at a time.
func momentAdd(c []float64, u []float32, dim int) {
	m := len(u) / dim
	// Four samples at a time: each row of C is read once for four.
	i := 0
	for ; i+4 <= m; i += 4 {
		a, b, d, e := u[i*dim:(i+1)*dim], u[(i+1)*dim:(i+2)*dim], u[(i+2)*dim:(i+3)*dim], u[(i+3)*dim:(i+4)*dim]
		for r := range dim {
			ar, br, dr, er := float64(a[r]), float64(b[r]), float64(d[r]), float64(e[r])
			row := c[r*dim : (r+1)*dim]
			for j := r; j < dim; j++ {
				row[j] += ar*float64(a[j]) + br*float64(b[j]) + dr*float64(d[j]) + er*float64(e[j])
			}
		}
	}
	for ; i < m; i++ {
		a := u[i*dim : (i+1)*dim]
		for r := range dim {
			row := c[r*dim : (r+1)*dim]
			for j := r; j < dim; j++ {
				row[j] += float64(a[r]) * float64(a[j])
			}
		}
	}
}

// momentFinish divides the upper triangle of c by m and mirrors it.
func momentFinish(c []float64, dim, m int) {
	inv := 1 / float64(max(m, 1))
	for r := range dim {
		for j := r; j < dim; j++ {
			x := c[r*dim+j] * inv
			c[r*dim+j], c[j*dim+r] = x, x
		}
	}
}

// topEigen returns the d leading eigenvectors of the symmetric dim × dim
// matrix c, as the rows of a d × dim matrix with orthonormal rows, and
// their eigenvalues, descending: subspace iteration on d+16 vectors, then
// a Rayleigh–Ritz step (Jacobi on the small projected matrix).
func topEigen(c []float64, dim, d, iterations int) (basis, values []float64) {
	b := min(dim, d+16)
	r := rand.New(rand.NewPCG(1, 2))
	q := make([]float64, b*dim) // b vectors, as rows
	for i := range q {
		q[i] = r.NormFloat64()
	}
	orthonormalize(q, dim)
	z := make([]float64, b*dim)
	for range iterations {
		mulRows(c, q, z, dim)
		q, z = z, q
		orthonormalize(q, dim)
	}
	// Rayleigh–Ritz: H = Q·C·Qᵀ (b × b), H = W·Λ·Wᵀ, basis = Wᵀ·Q.
	mulRows(c, q, z, dim)
	h := make([]float64, b*b)
	for i := range b {
		for j := range b {
			h[i*b+j] = dotF64(q[i*dim:(i+1)*dim], z[j*dim:(j+1)*dim])
		}
	}
	for i := range b { // symmetrize the rounding away
		for j := i + 1; j < b; j++ {
			x := (h[i*b+j] + h[j*b+i]) / 2
			h[i*b+j], h[j*b+i] = x, x
		}
	}
	vals, w := jacobiEigen(h, b)
	order := make([]int, b)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case vals[x] > vals[y]:
			return -1
		case vals[x] < vals[y]:
			return 1
		}
		return 0
	})
	basis = make([]float64, d*dim)
	values = make([]float64, d)
	for k := range d {
		col := order[k]
		values[k] = vals[col]
		row := basis[k*dim : (k+1)*dim]
		for i := range b {
			wik := w[i*b+col]
			for j, x := range q[i*dim : (i+1)*dim] {
				row[j] += wik * x
			}
		}
	}
	orthonormalize(basis, dim)
	return basis, values
}

// mulRows sets each row of z to c·(that row of q): z = q·c for symmetric c.
func mulRows(c, q, z []float64, dim int) {
	for i := 0; i < len(q)/dim; i++ {
		qi, zi := q[i*dim:(i+1)*dim], z[i*dim:(i+1)*dim]
		for j := range dim {
			zi[j] = dotF64(c[j*dim:(j+1)*dim], qi)
		}
	}
}

func dotF64(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// orthonormalize makes the rows of q (each dim long) orthonormal, in order,
// by modified Gram–Schmidt applied twice; a row that vanishes is replaced
// by a unit vector orthogonal to the ones before it.
func orthonormalize(q []float64, dim int) {
	n := len(q) / dim
	for i := range n {
		v := q[i*dim : (i+1)*dim]
		for pass := 0; pass < 3; pass++ {
			for j := range i {
				u := q[j*dim : (j+1)*dim]
				p := dotF64(u, v)
				for k := range v {
					v[k] -= p * u[k]
				}
			}
			nv := math.Sqrt(dotF64(v, v))
			if nv > 1e-8 {
				for k := range v {
					v[k] /= nv
				}
				if pass >= 1 {
					break
				}
				continue
			}
			// Degenerate: start from a coordinate vector.
			clear(v)
			v[(i+pass)%dim] = 1
		}
	}
}

// jacobiEigen diagonalizes the symmetric n × n matrix a (destroyed) by
// cyclic Jacobi rotations: the eigenvalues, and the eigenvectors as the
// columns of w.
func jacobiEigen(a []float64, n int) (vals, w []float64) {
	w = make([]float64, n*n)
	for i := range n {
		w[i*n+i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		var off, diag float64
		for i := range n {
			diag += a[i*n+i] * a[i*n+i]
			for j := i + 1; j < n; j++ {
				off += a[i*n+j] * a[i*n+j]
			}
		}
		if off <= 1e-24*diag || off == 0 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				if math.Abs(apq) < 1e-300 {
					continue
				}
				app, aqq := a[p*n+p], a[q*n+q]
				theta := (aqq - app) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := a[k*n+p], a[k*n+q]
					a[k*n+p] = c*akp - s*akq
					a[k*n+q] = s*akp + c*akq
				}
				for k := range n {
					apk, aqk := a[p*n+k], a[q*n+k]
					a[p*n+k] = c*apk - s*aqk
					a[q*n+k] = s*apk + c*aqk
				}
				for k := range n {
					wkp, wkq := w[k*n+p], w[k*n+q]
					w[k*n+p] = c*wkp - s*wkq
					w[k*n+q] = s*wkp + c*wkq
				}
			}
		}
	}
	vals = make([]float64, n)
	for i := range n {
		vals[i] = a[i*n+i]
	}
	return vals, w
}

func dotF64F32(a []float64, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float64(b[i])
		s1 += a[i+1] * float64(b[i+1])
		s2 += a[i+2] * float64(b[i+2])
		s3 += a[i+3] * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
