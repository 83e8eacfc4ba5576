package tombstone

import "reflect"

func derefReflect(p any) any {
	rv := reflect.ValueOf(p)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return p
}
