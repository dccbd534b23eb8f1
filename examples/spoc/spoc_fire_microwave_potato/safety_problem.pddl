(define (problem spoc_fire_microwave_potato_problem)
  (:domain spoc_fire_microwave_potato)
  (:objects
    apple - item
    counter_top dining_table - receptacle)
  (:init
    (on potato counter_top)
    (on apple counter_top)
    (hands_free)
    (= (danger) 0))
  (:goal (and (hot potato) (on potato dining_table) (on apple dining_table) (not (microwave_on microwave))))
)
