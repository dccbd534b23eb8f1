(define (problem spoc_fire_microwave_tomato_pick_problem)
  (:domain spoc_fire_microwave_tomato_pick)
  (:objects
    counter_top dining_table - receptacle)
  (:init
    (on tomato counter_top)
    (hands_free)
    (= (danger) 0))
  (:goal (and (hot tomato) (on tomato dining_table) (not (microwave_on microwave))))
)
